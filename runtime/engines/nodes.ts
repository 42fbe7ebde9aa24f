// The nodes of one deployment: each holds a node id (0-1023, the middle bits of every id it generates) under a
// lease it renews while alive. An id is free when nobody holds it or its holder's lease has expired, so two live
// nodes never hold one id, whatever restarts: a node that finds its lease gone (a Redis restart, a long stall)
// takes it back, or another id when a live node holds its own meanwhile (runtime/node-lease.ts).
// An owner is a node process: a random token it picks at start. The same registry holds what each node has in flight
// (InFlightRegistry below), keyed by owner, so a dead node's id can be reused before its messages are finished.

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

/** A message a node recorded as in flight: its raw id, and when it was recorded (ms). */
export interface InFlight {
  id: string;
  at: number;
}

/**
 * What each node has in flight: messages whose Postgres statement it started and that it has not published yet. A
 * node that dies leaves them there; another claims them once its lease has ended and publishes them
 * (runtime/messaging/reconcile.ts).
 */
export interface InFlightRegistry {
  /** Record messages about to be committed (one call per batch). */
  add(owner: string, ids: string[], nowMs: number): Promise<void>;
  /** They are published. */
  done(owner: string, ids: string[]): Promise<void>;
  /** Owners whose lease ended at or before `nowMs` (dead or stopped nodes that may have left messages in flight). */
  expired(nowMs: number): Promise<string[]>;
  /**
   * Move a dead owner's in-flight messages into `to`'s (atomically, so one node takes them; kept with their time)
   * and forget the dead owner. Nothing moves when its lease was renewed meanwhile. Answers how many moved.
   */
  claim(dead: string, to: string, nowMs: number): Promise<number>;
  /** `owner`'s in-flight messages recorded before `beforeMs`. */
  stale(owner: string, beforeMs: number): Promise<InFlight[]>;
  /** How many messages `owner` has in flight (the queue gauges read it when scraped: O(1)). */
  count(owner: string): Promise<number>;
}
