// In-process moment record cache: the same semantics as the Redis scripts, in a Map. The number of records
// is bounded; the least recently written is dropped first (a later read fills it from Postgres again).
import { type CachedMoment, type MomentCache, type MomentCounts, type MomentRecord, momentJson } from "../moments.ts";

interface Entry {
  head?: string;
  likes: number;
  comments: number;
  rev: bigint;
  gone: boolean;
}

interface MemoryMomentsOptions {
  /** Most records kept at once. */
  maxRecords?: number;
}

export class MemoryMoments implements MomentCache {
  private readonly max: number;
  private readonly records = new Map<bigint, Entry>();

  constructor(opts: MemoryMomentsOptions = {}) {
    this.max = opts.maxRecords ?? 200_000;
  }

  async get(ids: bigint[]): Promise<CachedMoment[]> {
    return ids.map((id) => {
      const e = this.records.get(id);
      if (!e) return undefined;
      if (e.gone) return null;
      return e.head === undefined || e.rev < 0n ? undefined : momentJson(e.head, e.likes, e.comments);
    });
  }

  async store(records: MomentRecord[]): Promise<void> {
    for (const r of records) this.write(r.id, r, r.head);
  }

  async counts(updates: MomentCounts[]): Promise<void> {
    for (const u of updates) this.write(u.id, u);
  }

  async forget(ids: bigint[]): Promise<void> {
    for (const id of ids) this.touch(id).gone = true;
  }

  private write(id: bigint, c: MomentCounts, head?: string): void {
    const e = this.touch(id);
    if (c.rev > e.rev) {
      e.likes = c.likes;
      e.comments = c.comments;
      e.rev = c.rev;
    }
    if (head !== undefined) e.head = head;
  }

  /** The entry of `id`, created if missing, moved to the newest end. */
  private touch(id: bigint): Entry {
    let e = this.records.get(id);
    if (e) this.records.delete(id);
    else e = { likes: 0, comments: 0, rev: -1n, gone: false };
    this.records.set(id, e);
    if (this.records.size > this.max) this.records.delete(this.records.keys().next().value!);
    return e;
  }
}
