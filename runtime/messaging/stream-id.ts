// The name of a stream (docs/ARCHITECTURE.md, "Messages"): a principal's inbox, or a group. Every part that names a
// stream (waiters, channels, pub/sub topics, the Redis stream log, reads past a cursor) takes a StreamId, never a
// bare string or a thread number with a sentinel.
//
// A StreamId is a string, so that it keys maps and travels between nodes as it is: the principal's id for an inbox,
// `g:<group id>` for a group (a principal's id is an agent's digits or a person's `P<digits>`, never "g:..."). The brand keeps any other string
// from passing for one: a StreamId is made only here.

/** A stream's id: the principal's id for its inbox, `g:<id>` for a group. Made by the functions below only. */
export type StreamId = string & { readonly __streamId: unique symbol };

/** The thread id a member's cursor row carries for its inbox (group cursors carry the group's id). */
export const INBOX_THREAD = 0n;

const GROUP = "g:";

/** The inbox of `principal`. */
export const inboxStream = (principal: string) => principal as StreamId;

/** The group `thread`. */
export const groupStream = (thread: bigint) => `${GROUP}${thread}` as StreamId;

/** The stream a member's cursor row names: its inbox (thread 0) or the group. */
export const memberStream = (member: string, thread: bigint) =>
  thread === INBOX_THREAD ? inboxStream(member) : groupStream(thread);

/** Whether the stream is a group's. */
export const isGroupStream = (id: StreamId) => id.startsWith(GROUP);

/** The group's id, or undefined for an inbox. */
export const groupOf = (id: StreamId): bigint | undefined =>
  isGroupStream(id) ? BigInt(id.slice(GROUP.length)) : undefined;

/** The thread id of the stream's cursor rows: the group's id, or 0 for an inbox. */
export const threadOf = (id: StreamId): bigint => groupOf(id) ?? INBOX_THREAD;

/**
 * A stream id read from outside the process (another node's frame, a Redis key): an agent's digits, `P<digits>` or
 * `g:<digits>`, or undefined.
 */
export function parseStreamId(raw: string): StreamId | undefined {
  return /^(?:g:|P)?[0-9]{1,19}$/.test(raw) ? (raw as StreamId) : undefined;
}
