// Redis limits engine: one EVALSHA per take, shared by every node on the same Redis.
import { isIP } from "node:net";
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
    if (isIP(ip) === 0) return 0;
    const until = Number(
      await this.redis.strike(this.keys.strikes(ip), this.keys.ban(ip), nowMs, rule.windowMs, rule.strikes, rule.banMs),
    );
    // a ban (a rare event) is also listed where a node starting up finds it; ended ones leave the list as it is written
    if (until > nowMs) {
      await this.redis
        .multi()
        .zadd(this.keys.bans(), until, ip)
        .zremrangebyscore(this.keys.bans(), "-inf", nowMs)
        .exec();
    }
    return until;
  }

  async bannedUntil(ip: string, nowMs: number): Promise<number> {
    const v = await this.redis.get(this.keys.ban(ip));
    const until = v ? Number(v) : 0;
    return until > nowMs ? until : 0;
  }

  async activeBans(nowMs: number): Promise<Map<string, number>> {
    const flat = await this.redis.zrangebyscore(this.keys.bans(), `(${nowMs}`, "+inf", "WITHSCORES");
    const live = new Map<string, number>();
    for (let i = 0; i + 1 < flat.length; i += 2) live.set(flat[i]!, Number(flat[i + 1]));
    return live;
  }
}
