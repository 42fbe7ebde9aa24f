// In-process limits engine: the same token-bucket and ban arithmetic as the Lua scripts. Every map is swept of
// what has ended (expired buckets, strike windows past, bans over), so keys nobody sends again cannot pile up.
import { isIP } from "node:net";
import type { BanRule, LimitsEngine, TakeResult } from "../limits.ts";

interface Bucket {
  tokens: number;
  ts: number;
  expiresAt: number;
}

interface Strikes {
  n: number;
  start: number;
  /** When this window's strikes stop counting. */
  expiresAt: number;
}

/** Sweep at least this often (ms of the clock passed in), and whenever the maps have doubled since the last sweep. */
const SWEEP_EVERY_MS = 10_000;
const SWEEP_MIN_SIZE = 1024;

export class MemoryLimits implements LimitsEngine {
  private readonly buckets = new Map<string, Bucket>();
  private readonly strikes = new Map<string, Strikes>();
  private readonly bans = new Map<string, number>();
  private lastSweep = -Infinity;
  private sweepAt = SWEEP_MIN_SIZE;

  async take(key: string, capacity: number, windowMs: number, nowMs: number, cost = 1): Promise<TakeResult> {
    const rate = capacity / windowMs;
    const b = this.buckets.get(key);
    let tokens = capacity;
    let ts = nowMs;
    if (b && b.expiresAt > nowMs) {
      tokens = b.tokens;
      ts = b.ts;
    }
    tokens = Math.min(capacity, tokens + Math.max(0, nowMs - ts) * rate);
    let allowed = false;
    let retryAfterMs = 0;
    if (tokens >= cost) {
      tokens -= cost;
      allowed = true;
    } else {
      retryAfterMs = Math.ceil((cost - tokens) / rate);
    }
    const resetMs = Math.ceil((capacity - tokens) / rate);
    this.buckets.set(key, { tokens, ts: Math.max(nowMs, ts), expiresAt: nowMs + resetMs + 1000 });
    this.maybeSweep(nowMs);
    return { allowed, remaining: Math.floor(tokens), retryAfterMs, resetMs };
  }

  async strike(ip: string, rule: BanRule, nowMs: number): Promise<number> {
    if (isIP(ip) === 0) return 0;
    const until = this.bans.get(ip) ?? 0;
    if (until > nowMs) return until;
    let s = this.strikes.get(ip);
    if (!s || nowMs - s.start >= rule.windowMs) s = { n: 0, start: nowMs, expiresAt: nowMs + rule.windowMs };
    s.n += 1;
    if (s.n >= rule.strikes) {
      this.strikes.delete(ip);
      this.bans.set(ip, nowMs + rule.banMs);
      this.maybeSweep(nowMs);
      return nowMs + rule.banMs;
    }
    this.strikes.set(ip, s);
    this.maybeSweep(nowMs);
    return 0;
  }

  async bannedUntil(ip: string, nowMs: number): Promise<number> {
    const until = this.bans.get(ip) ?? 0;
    if (until > nowMs) return until;
    if (until) this.bans.delete(ip);
    return 0;
  }

  async activeBans(nowMs: number): Promise<Map<string, number>> {
    const live = new Map<string, number>();
    for (const [ip, until] of this.bans) if (until > nowMs) live.set(ip, until);
    return live;
  }

  /** How many entries each map holds (tests). */
  size(): { buckets: number; strikes: number; bans: number } {
    return { buckets: this.buckets.size, strikes: this.strikes.size, bans: this.bans.size };
  }

  private maybeSweep(nowMs: number): void {
    const total = this.buckets.size + this.strikes.size + this.bans.size;
    if (total < this.sweepAt && nowMs - this.lastSweep < SWEEP_EVERY_MS) return;
    for (const [k, b] of this.buckets) if (b.expiresAt <= nowMs) this.buckets.delete(k);
    for (const [k, s] of this.strikes) if (s.expiresAt <= nowMs) this.strikes.delete(k);
    for (const [k, until] of this.bans) if (until <= nowMs) this.bans.delete(k);
    this.lastSweep = nowMs;
    this.sweepAt = Math.max(SWEEP_MIN_SIZE, 2 * (this.buckets.size + this.strikes.size + this.bans.size));
  }
}
