// Every pub/sub channel nodes talk on, with the shape of its messages: one codec per channel, checked on the way in.
// A message another node sent that does not fit (another version, a bug, someone with access to Redis) is logged
// and dropped, never cast. Publish and listen through here; no channel is named anywhere else.
import { isIP } from "node:net";
import { z } from "zod";
import type { Logger } from "../log.ts";
import { MIXES_WITH, PROTOCOL } from "../release.ts";
import type { Published } from "./stream-log.ts";
import type { PubSub } from "./pubsub.ts";

interface NodeChannel<T> {
  readonly name: string;
  encode(v: T): string;
  /** The message, or undefined when it is malformed. */
  decode(text: string): T | undefined;
}

/**
 * The protocol of a message (runtime/release.ts): `v` in a JSON message, `;v=` in the stream message's head; none
 * (a node of 0.1.0) is 1. A message older than MIXES_WITH is dropped like a malformed one (the startup check keeps
 * such nodes apart; this is the second line). A newer one is read: a message does not say which releases its sender
 * mixes with, and a release that mixes with this one only adds fields, which the schemas strip.
 */
function readable(v: unknown): boolean {
  const n = v === undefined ? 1 : v;
  return typeof n === "number" && Number.isInteger(n) && n >= MIXES_WITH;
}

/** A JSON channel: each message carries `v`, this release's protocol, beside its fields (so no field may be named `v`). */
function json<S extends z.ZodObject>(name: string, schema: S): NodeChannel<z.infer<S>> {
  return {
    name,
    encode: (v) => JSON.stringify({ v: PROTOCOL, ...v }),
    decode(text) {
      let v: unknown;
      try {
        v = JSON.parse(text);
      } catch {
        return undefined;
      }
      if (typeof v !== "object" || v === null || !readable((v as { v?: unknown }).v)) return undefined;
      const r = schema.safeParse(v);
      return r.success ? r.data : undefined;
    },
  };
}

/**
 * A channel whose message is one principal's id, as text. Its version is its name: the text is all a node of 0.1.0
 * reads, so a change to it would be a new channel (`auth.forget.2`), heard beside the old one while both releases run.
 */
function principalId(name: string): NodeChannel<string> {
  return { name, encode: (id) => id, decode: (text) => (/^[A-Za-z0-9_]{1,64}$/.test(text) ? text : undefined) };
}

const digits = z.string().regex(/^\d+$/);
const id = z.string().min(1).max(64);

/**
 * A committed message on its way to every node: which node sent it (each skips its own), and the message. Its `key`
 * is the stream's id as the sender wrote it: the receiver reads it with parseStreamId (runtime/messaging/stream-id.ts).
 */
export interface StreamMessage extends Omit<Published, "key"> {
  key: string;
  origin: string;
  /** The sender's W3C trace context (`traceparent`), when the send is traced (runtime/tracing.ts). */
  traceparent?: string;
}

/** A traceparent as W3C Trace Context writes it: version, trace id, parent span id, flags. */
const TRACEPARENT = /^[0-9a-f]{2}-[0-9a-f]{32}-[0-9a-f]{16}-[0-9a-f]{2}$/;

/**
 * `<sender> <stream key> <seq> <id> <payload JSON>`: text, not JSON, so the payload (already JSON) is not escaped
 * again; the append script (runtime/engines/stream-log.ts) joins the head and the payload. `<sender>` is the origin
 * node followed by `;name=value` attributes: `v` (the protocol) and `tp` (a traceparent). A node of 0.1.0 reads the
 * whole of it as the origin, which only has to differ from its own, so it still delivers the message.
 */
const streamMessage: NodeChannel<StreamMessage> & { head(m: StreamMessage, traceparent?: string): string } = {
  name: "stream.message",
  // (the traceparent may come apart from the message: a field set to undefined on a hot path's object costs ~0.8 us)
  head: (m, traceparent = m.traceparent) =>
    `${m.origin};v=${PROTOCOL}${traceparent ? `;tp=${traceparent}` : ""} ${m.key} ${m.seq} ${m.id} `,
  encode: (m) => streamMessage.head(m) + m.payload,
  decode(text) {
    const parts = text.split(" ", 4);
    if (parts.length < 4) return undefined;
    const [sender, key, seq, id] = parts as [string, string, string, string];
    const payload = text.slice(parts.join(" ").length + 1);
    if (sender === "" || key === "" || !/^\d+$/.test(seq) || !/^\d+$/.test(id) || !payload.startsWith("{"))
      return undefined;
    const [origin, ...attrs] = sender.split(";");
    let v: number | undefined;
    let traceparent: string | undefined;
    for (const a of attrs) {
      if (a.startsWith("v=")) v = /^\d{1,6}$/.test(a.slice(2)) ? Number(a.slice(2)) : NaN;
      else if (a.startsWith("tp=") && TRACEPARENT.test(a.slice(3))) traceparent = a.slice(3);
    }
    if (origin === "" || !readable(v)) return undefined;
    return { origin: origin!, key, seq: Number(seq), id, payload, ...(traceparent ? { traceparent } : {}) };
  },
};

/** Who did something, as frames show them; a node from before avatars sends no `avatar_url` (read as none). */
const author = z.object({ id, display_name: z.string(), avatar_url: z.string().max(200).nullable().default(null) });

export const CHANNELS = {
  streamMessage,
  /** Members joined or left a group: their sockets on every node follow. */
  groupMembers: json(
    "group.members",
    z.object({ origin: z.string(), thread: digits, joined: z.array(id), left: z.array(id) }),
  ),
  /** A principal's tokens or profile changed: every node drops what it cached. */
  authForget: principalId("auth.forget"),
  /** A principal's blocks or mutes changed (either way): every node drops its cached copy (runtime/social/blocks.ts). */
  relationsForget: principalId("relations.forget"),
  /** A paid agent's settings changed: every node drops its cached copy. */
  paymentsTerms: principalId("payments.terms"),
  /** An IP was banned until a time (ms). */
  limitsBan: json(
    "limits.ban",
    z.object({
      ip: z.string().refine((ip) => isIP(ip) !== 0),
      until: z.number().int().positive().max(Number.MAX_SAFE_INTEGER),
    }),
  ),
  presence: json("presence", author.extend({ status: z.enum(["online", "offline"]) })),
  typing: json(
    "typing",
    z.object({
      thread: z.string().min(1).max(80),
      from: author,
      state: z.enum(["start", "stop"]),
      to: z.array(id),
    }),
  ),
  /**
   * A message was edited or deleted (after the commit): its stream (`key`) and its payload as it is now. Every node
   * swaps the payload in what it holds of the stream, and the connections of `to` (the thread's members) hear it.
   */
  messageUpdate: json(
    "message.update",
    z.object({
      origin: z.string(),
      key: z.string().min(1).max(80),
      id: digits,
      payload: z.string().startsWith("{"),
      to: z.array(id),
    }),
  ),
  /** A principal marked a thread read: to whom its connections on every node say so. */
  read: json(
    "read",
    z.object({
      thread: z.string().min(1).max(80),
      from: author,
      through: z.string().min(1).max(80),
      to: z.array(id),
    }),
  ),
  /** A friend request was made: the recipient's connections on every node hear it. */
  friendRequest: json(
    "friend.request",
    z.object({
      to: id,
      request: z.object({
        id: z.string().max(80),
        from: id,
        to: id,
        status: z.literal("pending"),
        created_at: z.string().max(40),
      }),
      from: author,
    }),
  ),
  /** A person's Web Push subscriptions changed: whether they hold any now (runtime/push/subscribers.ts). */
  pushSubscribers: json("push.subscribers", z.object({ principal: id, has: z.boolean() })),
  /** The friendship of two principals was made or ended: which pair, nothing more. */
  friendship: json("friendship", z.object({ a: id, b: id })),
  /**
   * A moment was published (after the commit): its author, its visibility and the moment as JSON (as GET
   * /v1/moments/{id} shows it). Every node hands it to the sessions here that may see it (runtime/ws/moment-relay.ts).
   */
  moment: json(
    "moment",
    z.object({
      author: id,
      visibility: z.enum(["public", "friends", "private"]),
      payload: z.string().startsWith("{").max(20_000),
    }),
  ),
  /** A moment's counts changed (after the commit): whose it is, its visibility, who changed them, and the counts. */
  momentCounts: json(
    "moment.counts",
    z.object({
      id: digits,
      author: id,
      visibility: z.enum(["public", "friends", "private"]),
      by: id.optional(),
      likes: z.number().int().min(0),
      comments: z.number().int().min(0),
      rev: z.number().int().min(0),
    }),
  ),
  /**
   * An agent's webhook endpoint was set (made, replaced, re-enabled), removed or disabled (runtime/webhooks/): every
   * node's dispatcher updates the agents it knows to have one, the node holding its job reloads or drops it, and a
   * disable reaches the agent's connections as the `webhook_disabled` frame.
   */
  webhook: json(
    "webhook",
    z.object({
      agent: id,
      change: z.enum(["set", "removed", "disabled"]),
      reason: z.string().max(500).optional(),
    }),
  ),
};

export type ChannelMessage<C> = C extends NodeChannel<infer T> ? T : never;

export function publish<T>(ps: PubSub, ch: NodeChannel<T>, v: T): Promise<void> {
  return ps.publish(ch.name, ch.encode(v));
}

/** Hear `ch` from every node; what does not decode is logged and dropped. Returns the unsubscribe function. */
export function listen<T>(
  ps: PubSub,
  ch: NodeChannel<T>,
  log: Logger | undefined,
  handler: (v: T) => void,
): Promise<() => Promise<void>> {
  return ps.subscribe(ch.name, (buf) => {
    const v = ch.decode(buf.toString());
    if (v === undefined)
      log?.warn({ channel: ch.name, bytes: buf.length }, "malformed message from another node dropped");
    else handler(v);
  });
}
