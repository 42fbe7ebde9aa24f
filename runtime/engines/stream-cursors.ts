// Where each member's cursor in each of its streams (its inbox, its groups) is, as Redis (or memory) remembers it:
// written after Postgres committed an ack (Postgres is the truth, migration 0010), and read by a long poll only when
// Postgres is out of reach, so that a member's messages still reach it from the node's recent ones
// (runtime/messaging/streams.ts). A cursor not remembered (never written, flushed, expired) is simply not known: the
// poll then waits for Postgres. A cursor is named as its Postgres row is: the member and the stream's thread id (0,
// INBOX_THREAD of runtime/messaging/stream-id.ts, for the member's inbox; the group's id for a group).

/** A member's cursor in a stream: acknowledged up to `acked`, and these numbers above it out of order. */
export interface StreamCursorState {
  acked: number;
  above: number[];
}

/** A cursor to record: a member's in a stream (`thread`: 0 for its inbox, else the group), as Postgres holds it now. */
export interface CursorWrite {
  member: string;
  thread: bigint;
  acked: number;
  above: number[];
  /** Only when nothing is remembered for that member and stream (a read of Postgres may be older than an ack's write). */
  ifAbsent?: boolean;
}

export interface StreamCursorCache {
  /**
   * Record cursors Postgres holds now (a batch of acks' at once): each merged with what is remembered (the larger
   * `acked`, the union of `above` less what `acked` covers), so writes from several nodes, in any order, leave the
   * newest state.
   */
  merge(writes: CursorWrite[]): Promise<void>;
  /** The remembered cursors of `member` in the streams of `threads` (one missing: not remembered). */
  read(member: string, threads: bigint[]): Promise<Map<bigint, StreamCursorState>>;
}

/** How long a remembered cursor lasts after its last write. */
export const STREAM_CURSOR_TTL_MS = 7 * 24 * 3600 * 1000;

/** The merge both engines make. */
export function mergeCursor(was: StreamCursorState | undefined, acked: number, above: number[]): StreamCursorState {
  const top = Math.max(was?.acked ?? -1, acked);
  const set = new Set([...(was?.above ?? []), ...above].filter((s) => s > top));
  return { acked: top, above: [...set].sort((a, b) => a - b) };
}
