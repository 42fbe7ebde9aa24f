// The limits engine: token buckets and IP bans. Time is always passed in, so tests set the clock.

export interface TakeResult {
  allowed: boolean;
  /** Whole tokens left after this take. */
  remaining: number;
  /** Milliseconds until a request of the same cost would be allowed (0 when allowed). */
  retryAfterMs: number;
  /** Milliseconds until the bucket is full again. */
  resetMs: number;
}

export interface BanRule {
  /** Refusals within `windowMs` that trigger a ban. */
  strikes: number;
  windowMs: number;
  banMs: number;
}

export interface LimitsEngine {
  /** Take `cost` tokens from the bucket `key` holding `capacity` tokens that refills completely over `windowMs`. */
  take(key: string, capacity: number, windowMs: number, nowMs: number, cost?: number): Promise<TakeResult>;
  /**
   * Record one refused request from `ip`; answers the time (ms) the IP is banned until, or 0. Only an address
   * (node:net isIP) is ever struck or banned: any other text answers 0 and writes nothing.
   */
  strike(ip: string, rule: BanRule, nowMs: number): Promise<number>;
  /** The time (ms) the IP is banned until, or 0. */
  bannedUntil(ip: string, nowMs: number): Promise<number>;
  /** Every ban still running at `nowMs` (ip -> until ms): what a node starting up loads. */
  activeBans(nowMs: number): Promise<Map<string, number>>;
}
