// The feed fan-out cache: capped, newest-first lists of moment ids per principal and one public timeline.
// Postgres stays the truth; a miss or a read beyond the cached depth falls back to it.

export interface FeedCache {
  /** Add a moment (raw id) to each timeline named; timelines are capped as they are written. */
  push(timelines: string[], momentId: bigint): Promise<void>;
  /** Remove a moment from the timelines named. */
  remove(timelines: string[], momentId: bigint): Promise<void>;
  /** Up to `count` ids strictly older than `before` (or newest when null), newest first; null when the timeline is not cached. */
  range(timeline: string, before: bigint | null, count: number): Promise<bigint[] | null>;
  /** Replace a timeline wholesale (after rebuilding it from Postgres). */
  fill(timeline: string, momentIds: bigint[]): Promise<void>;
  /** Drop a timeline so the next read rebuilds it. */
  invalidate(timeline: string): Promise<void>;
}
