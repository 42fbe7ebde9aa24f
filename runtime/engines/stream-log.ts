// The shared recent history of every stream (a principal's inbox, a group): each committed message is appended to its
// stream's log and announced to every node in one step, so the log is the live path and the short history at once.
// Postgres holds every message and every cursor; the log holds the last STREAM_LOG_MAX messages of a stream, and a
// stream idle for STREAM_LOG_IDLE_MS is dropped whole. A message's position is its gap-free number from Postgres,
// carried in the entry: a log that lost entries (trimmed, expired, flushed, or an append that never ran) shows a hole
// in the numbers, and a reader goes to Postgres past what the log holds without one (runtime/messaging/streams.ts).
import type { StreamId } from "../messaging/stream-id.ts";

/** A committed message as a stream carries it: its stream, number, id and JSON payload. */
export interface Published {
  /** Its stream (the key of the stream's log, channel and waiters). */
  key: StreamId;
  seq: number;
  id: string;
  payload: string;
}

/** Messages a stream's log keeps (the newest). */
export const STREAM_LOG_MAX = 32;
/** A stream's log is dropped this long after its last append. */
export const STREAM_LOG_IDLE_MS = 15 * 60 * 1000;

export interface StreamLog {
  /**
   * Append a committed message to its stream's log and publish `head + payload` on the pub/sub channel `channel`,
   * as one step (a single script on Redis). Rejects when the backing store cannot be reached.
   */
  append(m: Published, channel: string, head: string): Promise<void>;
  /** The messages the log of stream `key` holds numbered above `after`, in number order, each number once. */
  after(key: StreamId, after: number): Promise<Published[]>;
  /**
   * Forget stream `key`'s log: a message in it changed (edited or deleted), so its payload there is stale. A reader
   * then finds nothing (or, after a later append, a hole) and reads Postgres, which has the message as it is now.
   */
  drop(key: StreamId): Promise<void>;
}

/** Of a log's entries, those numbered above `after`, in number order and each number once (what both engines answer). */
export function above(entries: Published[], after: number): Published[] {
  const seen = new Set<number>();
  return entries.filter((m) => m.seq > after && !seen.has(m.seq) && seen.add(m.seq)).sort((a, b) => a.seq - b.seq);
}

/** The run of `got` (numbered above `after`, in order) that follows `after` without a hole. */
export function contiguous(got: Published[], after: number): Published[] {
  let n = 0;
  while (n < got.length && got[n]!.seq === after + 1 + n) n++;
  return n === got.length ? got : got.slice(0, n);
}
