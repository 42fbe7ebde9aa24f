// Redis presence: one sorted set per principal (connection id -> expiry ms). Connect and disconnect are one
// script each; refreshes and online checks for many principals go out together (written in one go: each
// connection coalesces its writes, runtime/engines/redis/coalesce.ts), each command to the shard of its key.
import type { PresenceEngine } from "../presence.ts";
import type { Keys } from "./keys.ts";
import type { ScriptedRedis } from "./scripts.ts";

export class RedisPresence implements PresenceEngine {
  constructor(
    private readonly redis: ScriptedRedis,
    private readonly keys: Keys,
  ) {}

  async connect(principal: string, connId: string, nowMs: number, ttlMs: number): Promise<boolean> {
    return (await this.redis.presenceConnect(this.keys.presence(principal), nowMs, nowMs + ttlMs, connId, ttlMs)) === 1;
  }

  async refresh(conns: { principal: string; connId: string }[], nowMs: number, ttlMs: number): Promise<void> {
    if (conns.length === 0) return;
    await Promise.all(
      conns.map((c) =>
        this.redis.presenceConnect(this.keys.presence(c.principal), nowMs, nowMs + ttlMs, c.connId, ttlMs),
      ),
    );
  }

  async disconnect(principal: string, connId: string, nowMs: number): Promise<boolean> {
    return (await this.redis.presenceDisconnect(this.keys.presence(principal), nowMs, connId)) === 1;
  }

  async online(principals: string[], nowMs: number): Promise<Set<string>> {
    const out = new Set<string>();
    if (principals.length === 0) return out;
    const counts = await Promise.all(
      principals.map((id) => this.redis.zcount(this.keys.presence(id), `(${nowMs}`, "+inf")),
    );
    counts.forEach((n, i) => {
      if (n > 0) out.add(principals[i]!);
    });
    return out;
  }
}
