// In-process feed cache: the same timeline semantics as the Redis scripts, kept in sorted arrays.
// The number of timelines is bounded; the least recently used one is dropped first (a later read
// simply rebuilds it from Postgres).
import { DEFAULT_FEED_DEPTH, type FeedCache, type PageRead, pageFromReads, type TimelineRead } from "../feed.ts";
import type { MomentCache } from "../moments.ts";

interface Timeline {
  /** Newest first, no duplicates. */
  ids: bigint[];
  /** null: not filled (only leases and pushes since); else complete for ids >= floor. */
  floor: bigint | null;
  leases: Set<string>;
}

interface MemoryFeedOptions {
  depth?: number;
  /** Most timelines kept at once. */
  maxTimelines?: number;
  /** The record cache pages are shown from: the engine set's own, so records stored there are read here. */
  moments: MomentCache;
}

export class MemoryFeed implements FeedCache {
  readonly depth: number;
  private readonly maxTimelines: number;
  private readonly timelines = new Map<string, Timeline>();
  private leaseSeq = 0;
  private readonly moments: MomentCache;

  constructor(opts: MemoryFeedOptions) {
    this.depth = opts.depth ?? DEFAULT_FEED_DEPTH;
    this.maxTimelines = opts.maxTimelines ?? 100_000;
    this.moments = opts.moments;
  }

  async readPage(timelines: string[], before: bigint | null, count: number, show: number): Promise<PageRead> {
    return pageFromReads(await this.read(timelines, before, count), count, show, (ids) => this.moments.get(ids));
  }

  async read(timelines: string[], before: bigint | null, count: number): Promise<TimelineRead[]> {
    return timelines.map((name) => {
      const t = this.touch(name);
      if (t && t.floor !== null) {
        const start = before === null ? 0 : firstBelow(t.ids, before);
        return { hit: true, floor: t.floor, ids: t.ids.slice(start, start + count) };
      }
      const lease = `l${++this.leaseSeq}`;
      if (t) t.leases.add(lease);
      else this.store(name, { ids: [], floor: null, leases: new Set([lease]) });
      return { hit: false, lease };
    });
  }

  async push(timelines: string[], momentId: bigint): Promise<void> {
    for (const name of timelines) {
      const t = this.timelines.get(name);
      if (!t) continue;
      insert(t.ids, momentId);
      this.trim(t);
    }
  }

  async remove(timelines: string[], momentIds: bigint[]): Promise<void> {
    const drop = new Set(momentIds);
    for (const name of timelines) {
      const t = this.timelines.get(name);
      if (t) t.ids = t.ids.filter((id) => !drop.has(id));
    }
  }

  async fill(timeline: string, lease: string, ids: bigint[], complete: boolean): Promise<boolean> {
    const t = this.timelines.get(timeline);
    if (!t || !t.leases.has(lease)) return false;
    t.leases.clear();
    for (const id of ids) insert(t.ids, id);
    let floor = 0n;
    if (!complete) for (const id of ids) if (floor === 0n || id < floor) floor = id;
    t.floor = floor;
    this.trim(t);
    return true;
  }

  async invalidate(timelines: string[]): Promise<void> {
    for (const name of timelines) this.timelines.delete(name);
  }

  private trim(t: Timeline): void {
    if (t.ids.length <= this.depth) return;
    t.ids.length = this.depth;
    const lowest = t.ids[this.depth - 1]!;
    if (t.floor !== null && lowest > t.floor) t.floor = lowest;
  }

  /** The timeline, marked most recently used. */
  private touch(name: string): Timeline | undefined {
    const t = this.timelines.get(name);
    if (t) {
      this.timelines.delete(name);
      this.timelines.set(name, t);
    }
    return t;
  }

  private store(name: string, t: Timeline): void {
    this.timelines.set(name, t);
    if (this.timelines.size > this.maxTimelines) {
      const oldest = this.timelines.keys().next().value;
      if (oldest !== undefined) this.timelines.delete(oldest);
    }
  }
}

/** Index of the first id strictly below `bound` in a newest-first array. */
function firstBelow(ids: bigint[], bound: bigint): number {
  let lo = 0;
  let hi = ids.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (ids[mid]! >= bound) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/** Insert keeping newest-first order and uniqueness. */
function insert(ids: bigint[], id: bigint): void {
  const i = firstBelow(ids, id);
  if (i > 0 && ids[i - 1] === id) return;
  ids.splice(i, 0, id);
}
