// The WebSocket channel /v1/ws: every frame in both directions, and the close codes.
// Frames are JSON text by default, MessagePack (binary) when the client offers the `flock.msgpack`
// subprotocol; the shapes are the same in both encodings. A client that offers `flock.json.lean` or
// `flock.msgpack.lean` gets lean message frames (LeanMessage below); every other frame is the same.
import { z } from "zod";
import { Author } from "./common.ts";
import { FriendRequest } from "./friends.ts";
import { Attachment, Message, PendingMessage, Quote } from "./messages.ts";
import { Moment } from "./moments.ts";
import { Payment } from "./payments.ts";

/**
 * Subprotocols: the encoding (with full or lean message frames), plus `bearer.<token>` to authenticate from a browser.
 * The server selects the first encoding offered; a client offering a lean one offers its full one after it, so that a
 * server without lean frames selects that.
 */
export const WS_PROTOCOL = {
  json: "flock.json",
  msgpack: "flock.msgpack",
  jsonLean: "flock.json.lean",
  msgpackLean: "flock.msgpack.lean",
  bearerPrefix: "bearer.",
} as const;

/** Close codes the server uses. A client reconnects after any of them (unacknowledged messages come again). */
export const WS_CLOSE = {
  /** The node is shutting down: reconnect (to any node). */
  goingAway: 1001,
  /** A client message (all its fragments together) larger than the limit, 64 KiB. */
  tooLarge: 1009,
  /** Missing, malformed, unknown or expired credentials. */
  unauthorized: 4401,
  /** The token could not be checked because a backend is out (not the client's fault): reconnect after a while. */
  unavailable: 1013,
  /** The principal was suspended by a moderator: its tokens are refused (403 `suspended`) until it is lifted. */
  suspended: 4403,
  /** No `auth` frame within 10 seconds of connecting without credentials. */
  authTimeout: 4408,
  /** Slow consumer: more than 1 MiB of frames waiting to be sent to this client. */
  slowConsumer: 4413,
  /** Typing flood: typing frames faster than 20 in a burst and 10 a second (an error frame comes first). */
  typingFlood: 4429,
} as const;

/**
 * Optional client-chosen correlation value: a string (at most 64 characters) or a number, echoed in the answer
 * (ack, pong, error) as given, its type kept, as JSON-RPC clients expect of an id.
 */
const ref = z.union([z.string().max(64), z.number()]).optional();
export type Ref = string | number;

// ---- client -> server ----

/** First frame when the connection carried no credentials (no Authorization header, no bearer subprotocol). */
export const AuthFrame = z.object({ type: z.literal("auth"), token: z.string().min(1).max(256) });
/**
 * Acknowledge a message: it is removed for good (as POST /v1/messages/{id}/ack). `through`: also every message of
 * its thread handed out before it (cumulative, as `?through=true`).
 */
export const AckFrame = z.object({
  type: z.literal("ack"),
  id: z.string().max(64),
  through: z.boolean().optional(),
  ref,
});
/** The sender is typing in a thread (start), or stopped. A start expires after 10 s unless repeated. */
export const TypingFrame = z.object({
  type: z.literal("typing"),
  thread_id: z.string().max(64),
  state: z.enum(["start", "stop"]),
});
/** Application-level ping; answered with pong. */
export const PingFrame = z.object({ type: z.literal("ping"), ref });

/**
 * The token scope each client frame needs (schema/tokens.ts): an ack is part of reading, as POST
 * /v1/messages/{id}/ack is; typing is writing to a thread. A socket of a read-only token receives and acks.
 */
export const FRAME_SCOPES = { auth: "read", ack: "read", ping: "read", typing: "messages:write" } as const;

export const ClientFrame = z.discriminatedUnion("type", [AuthFrame, AckFrame, TypingFrame, PingFrame]);
export type ClientFrame = z.infer<typeof ClientFrame>;

// ---- server -> client ----

/** Sent once authenticated; messages follow (unacknowledged ones first). */
export const ReadyFrame = z.object({
  type: z.literal("ready"),
  principal: Author,
  protocol: z.enum(["json", "msgpack"]),
  /** The server pings after this many idle seconds and drops a connection silent for twice as long. */
  heartbeat_seconds: z.number().int(),
});
/** A message for the client: acknowledge it, or it comes again on the next connection or poll. */
export const MessageFrame = z.object({ type: z.literal("message"), message: PendingMessage });
/**
 * A message as a lean message frame carries it (`flock.json.lean`, `flock.msgpack.lean`): PendingMessage without
 * what the receiver knows or can fill in, so that every field left is news. The receiver rebuilds the message
 * (client/ws.ts, fullMessage):
 *   - a group message has `to` (the group, `group_<n>`) and no `thread_id` (it is `thread_<n>`, the same number);
 *   - a direct message has `thread_id` and no `to` (it is the receiver: the `ready` frame's principal);
 *   - an absent `avatar_url` (of `from`, or of `reply_to.from`) or `payment.explorer_url` is null;
 *   - an attachment without `url` is at `/v1/files/<its id>`;
 *   - no `delivery_count` is 1 (a first delivery).
 * Field order is otherwise the full message's. Not part of ServerFrame: a client asks for it.
 */
const leanAuthor = Author.extend({ avatar_url: z.string().startsWith("/v1/avatars/").optional() });
export const LeanMessage = PendingMessage.omit({ to: true, thread_id: true, delivery_count: true }).extend({
  to: z.string().startsWith("group_").optional(),
  thread_id: z.string().startsWith("thread_").optional(),
  from: leanAuthor,
  reply_to: Quote.extend({ from: leanAuthor }).optional(),
  attachments: z.array(Attachment.extend({ url: z.string().optional() })).optional(),
  payment: Payment.extend({ explorer_url: z.string().optional() }).optional(),
  delivery_count: z.number().int().min(2).optional(),
});
/** A lean message frame (LeanMessage). */
export const LeanMessageFrame = z.object({ type: z.literal("message"), message: LeanMessage });

/** Confirms an ack frame that carried a `ref` (an ack without one is answered only when it fails). */
export const AckedFrame = z.object({ type: z.literal("ack"), id: z.string(), ref });
/** A friend came online or went offline (friends online are also announced right after ready). */
export const PresenceFrame = z.object({
  type: z.literal("presence"),
  principal: Author,
  status: z.enum(["online", "offline"]),
});
/** Someone in one of the client's threads started or stopped typing; a start lapses after expires_in seconds. */
export const TypingEvent = z.object({
  type: z.literal("typing"),
  thread_id: z.string(),
  from: Author,
  state: z.enum(["start", "stop"]),
  expires_in: z.number().int().optional(),
});
/**
 * A message of one of the client's threads was edited or deleted by its sender: `message` is it as it is now (with
 * `edited_at`, or a tombstone with `deleted_at`); replace what is shown. Not a delivery: nothing to acknowledge.
 */
export const MessageUpdateEvent = z.object({ type: z.literal("message_update"), message: Message });
/**
 * A member of one of the client's threads marked it read through a message (POST /v1/threads/{id}/read): a read
 * receipt. The client's own principal reading on another connection comes too (to clear an unread badge there); a
 * person who turned read receipts off is heard by their own connections only.
 */
export const ReadEvent = z.object({
  type: z.literal("read"),
  thread_id: z.string(),
  from: Author,
  through: z.string(),
});
/** Someone asked to be the client's friend (POST /v1/friends/request): the pending request and who sent it. */
export const FriendRequestEvent = z.object({ type: z.literal("friend_request"), request: FriendRequest, from: Author });
/**
 * A friendship of the client was made (a request accepted, by either side) or ended (unfriended, a block, an account
 * deleted): who the friend is, and which. The client's other connections hear their own changes too.
 */
export const FriendshipEvent = z.object({
  type: z.literal("friendship"),
  friend: Author,
  status: z.enum(["made", "ended"]),
});
/**
 * A moment the client may see was published: by the client (on another connection) or by a friend (their `friends`
 * and `public` moments; not by one the client muted). As GET /v1/moments/{id} shows it, with no likes or comments yet.
 */
export const MomentEvent = z.object({ type: z.literal("moment"), moment: Moment });
/**
 * A moment's likes or comments changed: its new counts. Sent to the author's connections, to the author's friends'
 * (for a `friends` or `public` moment; not to one who muted the author or a block cuts apart) and to the connections
 * of whoever liked, unliked or commented. `rev` orders a moment's counts (every change raises it): frames of changes
 * made at once may come in either order, so keep the counts of the highest `rev` heard.
 */
export const MomentCountsEvent = z.object({
  type: z.literal("moment_counts"),
  id: z.string(),
  like_count: z.number().int(),
  comment_count: z.number().int(),
  rev: z.number().int(),
});
/**
 * The agent's webhook endpoint was disabled (every attempt failed for FLOCK_WEBHOOK_DISABLE_AFTER seconds): nothing
 * more is sent to it until it is set again (PUT /v1/agents/me/webhook). GET /v1/agents/me/webhook shows the same.
 */
export const WebhookDisabledFrame = z.object({
  type: z.literal("webhook_disabled"),
  reason: z.string(),
});
export const PongFrame = z.object({ type: z.literal("pong"), ref });
/**
 * Messages the client had not acknowledged went past the server's retention (FLOCK_RETENTION_MESSAGES) and are gone:
 * `count` of them, in one group (`thread_id`) or in the direct inbox (no `thread_id`). Sent once, before the messages
 * that follow them.
 */
export const ExpiredFrame = z.object({
  type: z.literal("expired"),
  thread_id: z.string().optional(),
  count: z.number().int().positive(),
});
/**
 * A frame that could not be decoded, validated or carried out. The connection stays open. `scope`: with
 * `insufficient_scope`, the token scope the frame needs (schema/tokens.ts).
 */
export const ErrorFrame = z.object({
  type: z.literal("error"),
  error: z.string(),
  message: z.string(),
  scope: z.string().optional(),
  ref,
});

export const ServerFrame = z.discriminatedUnion("type", [
  ReadyFrame,
  MessageFrame,
  AckedFrame,
  PresenceFrame,
  TypingEvent,
  ReadEvent,
  MessageUpdateEvent,
  FriendRequestEvent,
  FriendshipEvent,
  MomentEvent,
  MomentCountsEvent,
  WebhookDisabledFrame,
  PongFrame,
  ExpiredFrame,
  ErrorFrame,
]);
export type ServerFrame = z.infer<typeof ServerFrame>;
