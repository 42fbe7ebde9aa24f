// Redis moment record cache: per moment a record hash and the JSON it serves (layout in keys.ts). Writes are one
// script call over all the records they touch (runtime/scripts/moments*-n.lua); reads one MGET of the JSON.
import type { CachedMoment, MomentCache, MomentCounts, MomentRecord } from "../moments.ts";
import { MOMENT_RECORD_MS } from "../../retention/cache-lifetimes.ts";
import type { Keys } from "./keys.ts";
import type { ScriptedRedis } from "./scripts.ts";

interface RedisMomentsOptions {
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
    // the backstop for a count update lost with its node (runtime/social/cache-repair.ts): 10 minutes, or the moments'
    // retention when shorter (runtime/retention/cache-lifetimes.ts)
    this.ttlMs = opts.ttlMs ?? MOMENT_RECORD_MS;
  }

  /** Per moment its record key, then its JSON key (the order the write scripts take them in). */
  private keysOf(ids: bigint[]): string[] {
    return ids.flatMap((id) => [this.keys.moment(id), this.keys.momentJson(id)]);
  }

  async get(ids: bigint[]): Promise<CachedMoment[]> {
    if (ids.length === 0) return [];
    const got = await this.redis.mget(ids.map((id) => this.keys.momentJson(id)));
    return got.map((v) => (v === null ? undefined : v === "" ? null : v));
  }

  async store(records: MomentRecord[]): Promise<void> {
    if (records.length === 0) return;
    const args = records.flatMap((r) => [r.likes, r.comments, String(r.rev), r.head]);
    await this.redis.momentsStore(2 * records.length, ...this.keysOf(records.map((r) => r.id)), this.ttlMs, 4, ...args);
  }

  async counts(updates: MomentCounts[]): Promise<void> {
    if (updates.length === 0) return;
    const args = updates.flatMap((u) => [u.likes, u.comments, String(u.rev)]);
    await this.redis.momentsStore(2 * updates.length, ...this.keysOf(updates.map((u) => u.id)), this.ttlMs, 3, ...args);
  }

  async forget(ids: bigint[]): Promise<void> {
    if (ids.length === 0) return;
    await this.redis.momentsForget(2 * ids.length, ...this.keysOf(ids), this.ttlMs);
  }
}
