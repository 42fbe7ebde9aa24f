// Redis limits engine: one EVALSHA per take, shared by every node on the same Redis.
import type { BanRule, LimitsEngine, TakeResult } from "../limits.ts";
import type { Keys } from "./keys.ts";
import type { ScriptedRedis } from "./scripts.ts";

export class RedisLimits implements LimitsEngine {
  constructor(
    private readonly redis: ScriptedRedis,
    private readonly keys: Keys,
  ) {}

  async take(key: string, capacity: number, windowMs: number, nowMs: number, cost = 1): Promise<TakeResult> {
    const [allowed, remaining, retryAfterMs, resetMs] = await this.redis.take(
      this.keys.bucket(key),
      capacity,
      windowMs,
      nowMs,
      cost,
    );
    return { allowed: allowed === 1, remaining, retryAfterMs, resetMs };
  }

  async strike(ip: string, rule: BanRule, nowMs: number): Promise<number> {
    const until = await this.redis.strike(
      this.keys.strikes(ip),
      this.keys.ban(ip),
      nowMs,
      rule.windowMs,
      rule.strikes,
      rule.banMs,
    );
    return Number(until);
  }

  async bannedUntil(ip: string, nowMs: number): Promise<number> {
    const v = await this.redis.get(this.keys.ban(ip));
    const until = v ? Number(v) : 0;
    return until > nowMs ? until : 0;
  }
}
