// Redis presence: one sorted set per principal (connection id -> expiry ms). Connect and disconnect are one
// script each; refreshes and online checks for many principals go out as one pipeline.
import type { Redis } from "ioredis";
import type { PresenceEngine } from "../presence.ts";
import type { Keys } from "./keys.ts";
import type { ScriptCommands, ScriptedRedis } from "./scripts.ts";

type Pipeline = ReturnType<Redis["pipeline"]> & {
  presenceConnect: (...args: Parameters<ScriptCommands["presenceConnect"]>) => Pipeline;
};

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
    const p = this.redis.pipeline() as Pipeline;
    for (const c of conns) p.presenceConnect(this.keys.presence(c.principal), nowMs, nowMs + ttlMs, c.connId, ttlMs);
    const results = (await p.exec()) ?? [];
    for (const [err] of results) if (err) throw err;
  }

  async disconnect(principal: string, connId: string, nowMs: number): Promise<boolean> {
    return (await this.redis.presenceDisconnect(this.keys.presence(principal), nowMs, connId)) === 1;
  }

  async online(principals: string[], nowMs: number): Promise<Set<string>> {
    const out = new Set<string>();
    if (principals.length === 0) return out;
    const p = this.redis.pipeline();
    for (const id of principals) p.zcount(this.keys.presence(id), `(${nowMs}`, "+inf");
    const results = (await p.exec()) ?? [];
    results.forEach(([err, n], i) => {
      if (err) throw err;
      if (Number(n) > 0) out.add(principals[i]!);
    });
    return out;
  }
}
