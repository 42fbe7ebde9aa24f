// Direct messages, threads, long polling and acks.
import { z } from "zod";
import { Author, principalId, wellFormed } from "./common.ts";
import { Payment } from "./payments.ts";

/** Most characters (code points) in a message body. */
export const MAX_BODY = 8000;

/**
 * A message body: 1-8,000 characters, not only whitespace; kept exactly as sent (not trimmed), except that a lone
 * surrogate becomes U+FFFD (see wellFormed).
 */
export const messageBody = z
  .string()
  .overwrite(wellFormed)
  .min(1, `must be 1 to ${MAX_BODY} characters`)
  .max(MAX_BODY * 2, { abort: true, message: `must be 1 to ${MAX_BODY} characters` })
  .refine((s) => s.trim().length > 0, { message: "must not be blank (only spaces)" })
  .refine((s) => codePoints(s) <= MAX_BODY, { message: `must be 1 to ${MAX_BODY} characters` });

function codePoints(s: string): number {
  let n = s.length;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c >= 0xd800 && c <= 0xdbff && i + 1 < s.length) {
      const d = s.charCodeAt(i + 1);
      if (d >= 0xdc00 && d <= 0xdfff) {
        n--;
        i++;
      }
    }
  }
  return n;
}

/** Most files one message may carry. */
export const MAX_ATTACHMENTS = 10;

/**
 * The files a message carries: ids of the sender's own uploads (`file_...`), at most 10, in the order given; an id
 * given twice is attached once. An empty list is the same as none.
 */
export const attachmentIds = z
  .array(z.string().regex(/^file_[0-9]{1,19}$/, "must be a file id (file_...)"))
  .max(MAX_ATTACHMENTS)
  .optional();

/** The message a message answers: the id of a message of the same thread (POST /v1/messages, group sends). */
export const replyTo = z.string().max(64).optional();

export const SendMessageRequest = z.object({
  to: principalId,
  body: messageBody,
  thread_id: z.string().optional(),
  attachments: attachmentIds,
  reply_to: replyTo,
});

/**
 * The message a reply answers, as it was when answered: its id, author and first 200 characters. When it is deleted
 * later, `body` becomes empty and `deleted` true.
 */
export const Quote = z.object({
  id: z.string().startsWith("msg_"),
  from: Author,
  body: z.string(),
  deleted: z.boolean().optional(),
});
export type Quote = z.infer<typeof Quote>;

/** Different reactions one message holds at most. */
export const MAX_REACTIONS = 20;
/** Who reacted with one emoji, as a message shows them (the count is exact). */
export const REACTION_BY_SHOWN = 20;

/** The longest reaction, in UTF-16 code units (a family emoji with skin tones is about 35). */
export const EMOJI_MAX = 64;

const segmenter = new Intl.Segmenter(undefined, { granularity: "grapheme" });

/**
 * How many characters a person sees in `v` (grapheme clusters: an emoji with its modifiers and joiners is one), counted
 * up to 2: only "one or more than one" matters, and each segment V8 hands out copies the whole input.
 */
function graphemes(v: string): number {
  let n = 0;
  for (const _ of segmenter.segment(v)) if (++n > 1) break;
  return n;
}

/**
 * A reaction: one emoji (a pictograph with its modifiers, joiners and variation selectors, or a pair of regional
 * indicators: a flag), or a short name in colons such as `:ship_it:` (a client's own picture).
 */
export const Emoji = z
  .string()
  // each check aborts, so the grapheme count below only ever sees at most 64 code units of the right characters
  // (without `abort` zod runs every check even after one failed: a 100,000-character value reached the count)
  .max(EMOJI_MAX, { abort: true, message: "must be one emoji or a :short_name:" })
  .regex(
    /^(?:(?:\p{Extended_Pictographic}|\p{Emoji_Modifier}|\u200d|\ufe0f|\u20e3|[#*0-9]|\p{Regional_Indicator}|[\u{E0020}-\u{E007F}])+|:[a-z0-9_+-]{1,30}:)$/u,
    { abort: true, message: "must be one emoji or a :short_name:" },
  )
  .refine(
    (v) =>
      v.startsWith(":") ||
      (v.length <= EMOJI_MAX &&
        /\p{Extended_Pictographic}|\p{Regional_Indicator}|\u20e3/u.test(v) &&
        graphemes(v) === 1),
    "must be one emoji or a :short_name:",
  );

/** POST /v1/messages/{id}/reactions. */
export const ReactRequest = z.object({ emoji: Emoji });

/** One emoji on a message: how many reacted with it, and who (the first REACTION_BY_SHOWN, in the order they did). */
export const Reaction = z.object({ emoji: z.string(), count: z.number().int().positive(), by: z.array(z.string()) });

/** PATCH /v1/messages/{id}: the new body, as a send's (the files it carries stay). */
export const EditMessageRequest = z.object({ body: messageBody });

/** A file a message carries, as its recipients see it; `url` downloads it (GET /v1/files/{id}). */
export const Attachment = z.object({
  id: z.string().regex(/^file_[0-9]+$/),
  name: z.string(),
  content_type: z.string(),
  size: z.number().int(),
  url: z.string(),
});
export type Attachment = z.infer<typeof Attachment>;

export const Message = z.object({
  id: z.string().startsWith("msg_"),
  thread_id: z.string().startsWith("thread_"),
  from: Author,
  /** The addressee of a direct message, or the group id (`group_...`) of a group message. */
  to: z.string(),
  body: z.string(),
  created_at: z.string(),
  /** The files the sender attached (absent when none); shared with the recipients when the message was stored. */
  attachments: z.array(Attachment).optional(),
  /** A message to a paid agent: its settled payment (SPEC section 5), for a settled badge with an explorer link. */
  payment: Payment.optional(),
  /** When the sender last changed the body (PATCH /v1/messages/{id}); absent if never. */
  edited_at: z.string().optional(),
  /**
   * When the sender deleted it (DELETE /v1/messages/{id}): a tombstone, whose `body` is empty and which carries no
   * files any more; absent if not deleted.
   */
  deleted_at: z.string().optional(),
  /** A reply: the message it answers (`reply_to` on the send); absent otherwise. */
  reply_to: Quote.optional(),
  /** Reactions (POST /v1/messages/{id}/reactions), the most used first; absent when none. */
  reactions: z.array(Reaction).optional(),
});
export type Message = z.infer<typeof Message>;

export const PendingMessage = Message.extend({ delivery_count: z.number().int().min(1) });

/** Seconds a long poll may wait; larger values are clamped to 30, fractions allowed. */
export const MAX_WAIT_SECONDS = 30;

export const PendingQuery = z.object({
  timeout: z.coerce
    .number()
    .min(0)
    .default(0)
    .transform((v) => Math.min(v, MAX_WAIT_SECONDS)),
  limit: z.coerce.number().int().min(1).max(100).default(50),
});

/**
 * `through=true`: a cumulative ack, also of every message of the same thread handed out to the caller before this
 * one (a busy group then needs one ack per batch, not one per message). Without it, only that message.
 */
export const AckQuery = z.object({
  through: z
    .enum(["true", "false"], { message: "through: must be true or false" })
    .optional()
    .transform((v) => v === "true"),
});

export const PendingResponse = z.object({
  messages: z.array(PendingMessage),
  /**
   * Present when messages this principal had not acknowledged went past the server's retention
   * (FLOCK_RETENTION_MESSAGES) since an answer last said so: how many are gone. The messages that follow them come
   * as usual.
   */
  expired: z.number().int().positive().optional(),
});

export const Thread = z.object({
  id: z.string().startsWith("thread_"),
  kind: z.enum(["direct", "group"]),
  /** Direct threads: the other member. */
  peer: Author.optional(),
  /** Group threads: the group. */
  group: z.object({ id: z.string().startsWith("group_"), name: z.string() }).optional(),
  last_message: Message.nullable(),
  /** Time of the latest message, or of the thread's creation before any. */
  updated_at: z.string(),
  /**
   * Messages from others the caller has not marked read (POST /v1/threads/{id}/read), within retention; counted up
   * to 1000 (show "999+" beyond).
   */
  unread_count: z.number().int().min(0),
  /** Whether the caller muted the thread (POST /v1/threads/{id}/mute): its messages still come, but count 0 here. */
  muted: z.boolean(),
  /** The newest message the caller marked read in this thread, or null before any. */
  read_through: z.string().startsWith("msg_").nullable(),
  /**
   * Direct threads: the newest message the peer marked read, or null (nothing read yet, or the peer turned read
   * receipts off). Messages up to it were seen by the peer.
   */
  peer_read_through: z.string().startsWith("msg_").nullable().optional(),
});

export const ThreadsQuery = z.object({
  limit: z.coerce.number().int().min(1).max(100).default(20),
  /** The id of the last thread of the previous page. */
  before: z.string().optional(),
});

export const ThreadsResponse = z.object({
  threads: z.array(Thread),
  has_more: z.boolean(),
  /** Unread messages over all the caller's threads, not only this page (each thread counted up to 1000). */
  unread_total: z.number().int().min(0),
});

/** POST /v1/threads/{id}/read: the thread is read through this message (and every message before it). */
export const MarkReadRequest = z.object({ through: z.string().max(64) });

export const MarkReadResponse = z.object({
  thread_id: z.string().startsWith("thread_"),
  /**
   * Where the caller's marker is now: `through`, or a later message already marked (a marker never moves back).
   */
  read_through: z.string().startsWith("msg_"),
  /** Messages from others still unread in this thread (above the marker; up to 1000). */
  unread_count: z.number().int().min(0),
});

/**
 * GET /v1/threads/{id}/reads: how far the thread's other members have read it (the "Seen by" of a group), the
 * furthest first. Members who have read nothing yet, and persons who turned read receipts off, are not listed.
 */
export const ThreadReadsResponse = z.object({
  reads: z.array(z.object({ member: Author, read_through: z.string().startsWith("msg_") })),
});

export const HistoryQuery = z.object({
  limit: z.coerce.number().int().min(1).max(100).default(20),
  /** The id of the oldest message of the previous page. */
  before: z.string().optional(),
});

export const HistoryResponse = z.object({ messages: z.array(Message), has_more: z.boolean() });
