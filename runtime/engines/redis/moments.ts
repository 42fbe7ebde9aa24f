// Redis moment record cache: one hash per moment (layout in keys.ts), each operation one script call
// over all the records it touches (runtime/scripts/moments*-n.lua).
import type { CachedMoment, MomentCache, MomentCounts, MomentRecord } from "../moments.ts";
import type { Keys } from "./keys.ts";
import type { ScriptedRedis } from "./scripts.ts";

export interface RedisMomentsOptions {
  /** Lifetime of a record since it was last written; a tombstone lives as long. */
  ttlMs?: number;
}

export class RedisMoments implements MomentCache {
  private readonly ttlMs: number;

  constructor(
    private readonly redis: ScriptedRedis,
    private readonly keys: Keys,
    opts: RedisMomentsOptions = {},
  ) {
    this.ttlMs = opts.ttlMs ?? 3600_000;
  }

  private keysOf(ids: bigint[]): string[] {
    return ids.map((id) => this.keys.moment(String(id)));
  }

  async get(ids: bigint[]): Promise<CachedMoment[]> {
    if (ids.length === 0) return [];
    const got = await this.redis.momentsGet(ids.length, ...this.keysOf(ids));
    return got.map((v) => (v === null ? undefined : v === "" ? null : v));
  }

  async store(records: MomentRecord[]): Promise<void> {
    if (records.length === 0) return;
    const args = records.flatMap((r) => [r.likes, r.comments, String(r.rev), r.head]);
    await this.redis.momentsStore(records.length, ...this.keysOf(records.map((r) => r.id)), this.ttlMs, 4, ...args);
  }

  async counts(updates: MomentCounts[]): Promise<void> {
    if (updates.length === 0) return;
    const args = updates.flatMap((u) => [u.likes, u.comments, String(u.rev)]);
    await this.redis.momentsStore(updates.length, ...this.keysOf(updates.map((u) => u.id)), this.ttlMs, 3, ...args);
  }

  async forget(ids: bigint[]): Promise<void> {
    if (ids.length === 0) return;
    await this.redis.momentsForget(ids.length, ...this.keysOf(ids), this.ttlMs);
  }
}
