// Node id leases in Redis: one script per operation (runtime/scripts/node*-2.lua), all on the {n} hash tag.
import type { NodeRegistry } from "../nodes.ts";
import type { Keys } from "./keys.ts";
import type { ScriptedRedis } from "./scripts.ts";

export class RedisNodes implements NodeRegistry {
  constructor(
    private readonly redis: ScriptedRedis,
    private readonly keys: Keys,
  ) {}

  async acquire(owner: string, nowMs: number, ttlMs: number, prefer?: number): Promise<number | null> {
    // a random start: after a Redis restart a new node is unlikely to try first the id a live node still holds
    const start = prefer ?? Math.floor(Math.random() * 1024);
    const id = await this.redis.nodeAcquire(this.keys.nodeIds(), this.keys.nodeLeases(), owner, nowMs, ttlMs, start);
    return id < 0 ? null : id;
  }

  async renew(owner: string, id: number, nowMs: number, ttlMs: number): Promise<boolean> {
    return (await this.redis.nodeRenew(this.keys.nodeIds(), this.keys.nodeLeases(), owner, id, nowMs, ttlMs)) === 1;
  }

  async release(owner: string, id: number): Promise<void> {
    await this.redis.nodeRelease(this.keys.nodeIds(), this.keys.nodeLeases(), owner, id);
    await this.redis.hdel(this.keys.nodeReleases(), owner);
  }

  async announce(owner: string, release: string, nowMs: number): Promise<void> {
    await this.redis.nodeAnnounce(this.keys.nodeReleases(), this.keys.nodeLeases(), owner, release, nowMs);
  }

  async live(nowMs: number): Promise<{ owner: string; announced: string | undefined }[]> {
    const owners = await this.redis.zrangebyscore(this.keys.nodeLeases(), `(${nowMs}`, "+inf");
    if (owners.length === 0) return [];
    const announced = await this.redis.hmget(this.keys.nodeReleases(), ...owners);
    return owners.map((owner, i) => ({ owner, announced: announced[i] ?? undefined }));
  }

  layout(mine: number): Promise<number> {
    return this.redis.layoutRaise(this.keys.layout(), mine);
  }
}
