// The nodes of one deployment: each holds a node id (0-1023, the middle bits of every id it generates) under a
// lease it renews while alive. An id is free when nobody holds it or its holder's lease has expired, so two live
// nodes never hold one id, whatever restarts: a node that finds its lease gone (a Redis restart, a long stall)
// takes it back, or another id when a live node holds its own meanwhile (runtime/node-lease.ts).
// An owner is a node process: a random token it picks at start.

export interface NodeRegistry {
  /**
   * Lease a free node id to `owner` until `nowMs + ttlMs`, trying `prefer` first, then the ids after it (by
   * default the engine picks where to start). Null when all 1024 are held.
   */
  acquire(owner: string, nowMs: number, ttlMs: number, prefer?: number): Promise<number | null>;
  /**
   * Extend `owner`'s lease of `id` to `nowMs + ttlMs`. True while `owner` holds it, or nobody live does (it is then
   * taken back: after a Redis restart every lease is gone); false when another live node holds it.
   */
  renew(owner: string, id: number, nowMs: number, ttlMs: number): Promise<boolean>;
  /** Give the id up (a node that stops), and forget what `owner` announced. */
  release(owner: string, id: number): Promise<void>;
  /**
   * Say which release `owner` runs (runtime/release.ts, as JSON), for the nodes that start later to check. Forgets
   * what owners whose lease ended before `nowMs` had announced.
   */
  announce(owner: string, release: string, nowMs: number): Promise<void>;
  /** Every owner whose lease runs past `nowMs`, with what it announced (undefined: nothing, a node of 0.1.0). */
  live(nowMs: number): Promise<{ owner: string; announced: string | undefined }[]>;
  /**
   * The layout number of the shared keyspace: raised to `mine` when lower or not set (never lowered); answers the
   * number stored before (`mine` when none was).
   */
  layout(mine: number): Promise<number>;
}
