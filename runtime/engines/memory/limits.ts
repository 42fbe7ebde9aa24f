// In-process limits engine: the same token-bucket and ban arithmetic as the Lua scripts.
import type { BanRule, LimitsEngine, TakeResult } from "../limits.ts";

interface Bucket {
  tokens: number;
  ts: number;
  expiresAt: number;
}

export class MemoryLimits implements LimitsEngine {
  private readonly buckets = new Map<string, Bucket>();
  private readonly strikes = new Map<string, { n: number; start: number }>();
  private readonly bans = new Map<string, number>();

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
    if (this.buckets.size > 100_000) this.sweep(nowMs);
    return { allowed, remaining: Math.floor(tokens), retryAfterMs, resetMs };
  }

  async strike(ip: string, rule: BanRule, nowMs: number): Promise<number> {
    const until = this.bans.get(ip) ?? 0;
    if (until > nowMs) return until;
    let s = this.strikes.get(ip);
    if (!s || nowMs - s.start >= rule.windowMs) s = { n: 0, start: nowMs };
    s.n += 1;
    if (s.n >= rule.strikes) {
      this.strikes.delete(ip);
      this.bans.set(ip, nowMs + rule.banMs);
      return nowMs + rule.banMs;
    }
    this.strikes.set(ip, s);
    return 0;
  }

  async bannedUntil(ip: string, nowMs: number): Promise<number> {
    const until = this.bans.get(ip) ?? 0;
    if (until > nowMs) return until;
    if (until) this.bans.delete(ip);
    return 0;
  }

  private sweep(nowMs: number): void {
    for (const [k, b] of this.buckets) if (b.expiresAt <= nowMs) this.buckets.delete(k);
  }
}
