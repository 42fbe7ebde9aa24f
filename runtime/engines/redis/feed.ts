// Redis feed cache: one sorted set per timeline (layout in runtime/scripts/feedRead-1.lua). Reading several
// timelines sends one script call each, all in flight together: one round trip. A page is one script call on one
// Redis (feedPage-n.lua: it builds the moment keys from the ids it merges); on a Redis Cluster, where a script's
// keys must be given and share a slot, it is the timelines' reads and then one MGET of the moments (two round trips).
// A moment is pushed to all its timelines in one call (feedPushMany-n.lua; on a cluster, one call per timeline).
import { randomBytes } from "node:crypto";
import { DEFAULT_FEED_DEPTH, type FeedCache, type PageRead, pageFromReads, type TimelineRead } from "../feed.ts";
import { ID_WIDTH, type Keys, padId } from "./keys.ts";
import type { ScriptedRedis } from "./scripts.ts";

interface RedisFeedOptions {
  depth?: number;
  /** Lifetime of a filled timeline; it is rebuilt from Postgres on the read after. */
  ttlMs?: number;
  /** Lifetime of a timeline whose rebuild never finished. */
  leaseTtlMs?: number;
  /** On a Redis Cluster: no script builds keys. */
  clustered?: boolean;
}

const ZERO = "0".repeat(ID_WIDTH);
/** Most timelines one push call takes (a moment of an author with more friends takes several). */
const PUSH_CHUNK = 500;

export class RedisFeed implements FeedCache {
  readonly depth: number;
  private readonly ttlMs: number;
  private readonly leaseTtlMs: number;
  private readonly clustered: boolean;
  private readonly leaseBase = randomBytes(6).toString("base64url");
  private leaseSeq = 0;

  constructor(
    private readonly redis: ScriptedRedis,
    private readonly keys: Keys,
    opts: RedisFeedOptions = {},
  ) {
    this.depth = opts.depth ?? DEFAULT_FEED_DEPTH;
    this.ttlMs = opts.ttlMs ?? 24 * 3600_000;
    this.leaseTtlMs = opts.leaseTtlMs ?? 60_000;
    this.clustered = opts.clustered ?? false;
  }

  async read(timelines: string[], before: bigint | null, count: number): Promise<TimelineRead[]> {
    const bound = before === null ? "(:" : `(${padId(before)}`;
    const lease = `${this.leaseBase}.${(++this.leaseSeq).toString(36)}`;
    const replies = await Promise.all(
      timelines.map((t) => this.redis.feedRead(this.keys.feed(t), bound, count, lease, this.leaseTtlMs)),
    );
    return replies.map((r): TimelineRead => {
      if (r.length === 0) return { hit: false, lease };
      return { hit: true, floor: BigInt(r[0]!), ids: r.slice(1).map((m) => BigInt(m)) };
    });
  }

  async readPage(timelines: string[], before: bigint | null, count: number, show: number): Promise<PageRead> {
    if (this.clustered) {
      return pageFromReads(await this.read(timelines, before, count), count, show, async (ids) => {
        const got = await this.redis.mget(ids.map((id) => this.keys.momentJson(id)));
        return got.map((v) => (v === null ? undefined : v === "" ? null : v));
      });
    }
    const lease = `${this.leaseBase}.${(++this.leaseSeq).toString(36)}`;
    const r = await this.redis.feedPage(
      timelines.length,
      ...timelines.map((t) => this.keys.feed(t)),
      before === null ? "(:" : `(${padId(before)}`,
      count,
      show,
      lease,
      this.leaseTtlMs,
      this.keys.momentJsonPrefix(),
    );
    switch (r[0]) {
      case 0:
        return { state: "miss", leases: r.slice(1).map((filled) => (filled === 1 ? null : lease)) };
      case 1:
        return { state: "deep" };
      case 2:
        return { state: "shown", count: r[2] as number, json: r[1] as string };
      default: {
        const n = r[1] as number;
        const entries = r.slice(2 + n, 2 + 2 * n) as (string | null)[];
        return {
          state: "hit",
          ids: r.slice(2, 2 + n).map((id) => BigInt(id!)),
          moments: entries.map((v) => (v === null ? undefined : v === "" ? null : v)),
        };
      }
    }
  }

  async push(timelines: string[], momentId: bigint): Promise<void> {
    if (timelines.length === 0) return;
    const member = padId(momentId);
    // one call per PUSH_CHUNK timelines, so no one script holds Redis long (on a cluster, one per timeline: each
    // is its own slot)
    if (!this.clustered) {
      const calls: Promise<number>[] = [];
      for (let i = 0; i < timelines.length; i += PUSH_CHUNK) {
        const keys = timelines.slice(i, i + PUSH_CHUNK).map((t) => this.keys.feed(t));
        calls.push(this.redis.feedPushMany(keys.length, ...keys, member, this.depth));
      }
      await Promise.all(calls);
      return;
    }
    await Promise.all(timelines.map((t) => this.redis.feedPush(this.keys.feed(t), member, this.depth)));
  }

  async remove(timelines: string[], momentIds: bigint[]): Promise<void> {
    if (momentIds.length === 0) return;
    const members = momentIds.map(padId);
    await Promise.all(timelines.map((t) => this.redis.zrem(this.keys.feed(t), ...members)));
  }

  async fill(timeline: string, lease: string, ids: bigint[], complete: boolean): Promise<boolean> {
    let floor = ZERO;
    if (!complete && ids.length > 0) {
      let low = ids[0]!;
      for (const id of ids) if (id < low) low = id;
      floor = padId(low);
    }
    const done = await this.redis.feedFill(
      this.keys.feed(timeline),
      lease,
      this.depth,
      floor,
      this.ttlMs,
      ...ids.map(padId),
    );
    return done === 1;
  }

  async invalidate(timelines: string[]): Promise<void> {
    if (timelines.length === 0) return;
    await Promise.all(timelines.map((t) => this.redis.unlink(this.keys.feed(t))));
  }
}
