// How long the Redis (or in-process) caches keep what retention makes obsolete: a stream's log and a moment's record
// never outlive the retention of what they hold, so a short retention bounds the caches too (a message or moment past
// its horizon is filtered out of every read anyway; keeping it cached would only grow memory).
import { STREAM_LOG_IDLE_MS } from "../engines/stream-log.ts";

/** A moment record's lifetime since it was last written (the backstop for a count update lost with its node). */
export const MOMENT_RECORD_MS = 600_000;

export interface CacheLifetimes {
  /** A stream's log is dropped this long after its last append. */
  streamLogIdleMs: number;
  /** A moment's cached record (and its tombstone) lives this long after its last write. */
  momentRecordMs: number;
}

export const DEFAULT_CACHE_LIFETIMES: CacheLifetimes = {
  streamLogIdleMs: STREAM_LOG_IDLE_MS,
  momentRecordMs: MOMENT_RECORD_MS,
};

/** The caches' lifetimes under a retention (ms, null: unlimited): the defaults, shortened to the retention. */
export function cacheLifetimes(messagesMs: number | null, momentsMs: number | null): CacheLifetimes {
  return {
    streamLogIdleMs: Math.min(STREAM_LOG_IDLE_MS, messagesMs ?? Infinity),
    momentRecordMs: Math.min(MOMENT_RECORD_MS, momentsMs ?? Infinity),
  };
}
