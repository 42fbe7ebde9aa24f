// Node id leases in process, by the same rules as the Redis scripts (runtime/scripts/node*-2.lua). One embedded
// node holds id 0 unless something else holds it.
import type { InFlight, InFlightRegistry, NodeRegistry } from "../nodes.ts";

export class MemoryNodes implements NodeRegistry {
  /** Node id -> owner. */
  private readonly ids = new Map<number, string>();
  /** Owner -> lease expiry ms. */
  private readonly leases = new Map<string, number>();
  /** Owner -> the release it announced. */
  private readonly releases = new Map<string, string>();
  /** The keyspace's layout number, once a node stored it. */
  private stored: number | undefined;

  private heldByOther(owner: string, id: number, nowMs: number): boolean {
    const holder = this.ids.get(id);
    return holder !== undefined && holder !== owner && (this.leases.get(holder) ?? 0) > nowMs;
  }

  private take(owner: string, id: number, nowMs: number, ttlMs: number): void {
    this.ids.set(id, owner);
    this.leases.set(owner, nowMs + ttlMs);
  }

  async acquire(owner: string, nowMs: number, ttlMs: number, prefer = 0): Promise<number | null> {
    for (let i = 0; i < 1024; i++) {
      const id = (prefer + i) % 1024;
      if (this.heldByOther(owner, id, nowMs)) continue;
      this.take(owner, id, nowMs, ttlMs);
      return id;
    }
    return null;
  }

  async renew(owner: string, id: number, nowMs: number, ttlMs: number): Promise<boolean> {
    if (this.heldByOther(owner, id, nowMs)) return false;
    this.take(owner, id, nowMs, ttlMs);
    return true;
  }

  /** Owners whose lease ended at or before `nowMs`. */
  expiredOwners(nowMs: number): string[] {
    return [...this.leases].filter(([, until]) => until <= nowMs).map(([owner]) => owner);
  }

  /** Forget an owner whose lease has ended; false when it runs past `nowMs`. */
  forgetIfExpired(owner: string, nowMs: number): boolean {
    if ((this.leases.get(owner) ?? 0) > nowMs) return false;
    this.leases.delete(owner);
    return true;
  }

  async release(owner: string, id: number): Promise<void> {
    this.releases.delete(owner);
    if (this.ids.get(id) !== owner) return;
    this.ids.delete(id);
    this.leases.set(owner, 0);
  }

  async announce(owner: string, release: string, nowMs: number): Promise<void> {
    this.releases.set(owner, release);
    for (const o of this.releases.keys())
      if (o !== owner && (this.leases.get(o) ?? 0) <= nowMs) this.releases.delete(o);
  }

  async live(nowMs: number): Promise<{ owner: string; announced: string | undefined }[]> {
    return [...this.leases]
      .filter(([, until]) => until > nowMs)
      .map(([owner]) => ({ owner, announced: this.releases.get(owner) }));
  }

  async layout(mine: number): Promise<number> {
    const before = this.stored ?? mine;
    if (this.stored === undefined || this.stored < mine) this.stored = mine;
    return before;
  }
}

export class MemoryInFlight implements InFlightRegistry {
  /** Owner -> raw message id -> when recorded. */
  private readonly sets = new Map<string, Map<string, number>>();

  constructor(private readonly nodes: MemoryNodes) {}

  async add(owner: string, ids: string[], nowMs: number): Promise<void> {
    let set = this.sets.get(owner);
    if (!set) {
      set = new Map();
      this.sets.set(owner, set);
    }
    for (const id of ids) set.set(id, nowMs);
  }

  async done(owner: string, ids: string[]): Promise<void> {
    const set = this.sets.get(owner);
    for (const id of ids) set?.delete(id);
  }

  async expired(nowMs: number): Promise<string[]> {
    return this.nodes.expiredOwners(nowMs);
  }

  async claim(dead: string, to: string, nowMs: number): Promise<number> {
    if (!this.nodes.forgetIfExpired(dead, nowMs)) return 0;
    const got = this.sets.get(dead);
    this.sets.delete(dead);
    if (!got) return 0;
    await this.add(to, [], nowMs);
    const into = this.sets.get(to)!;
    for (const [id, at] of got) if (!into.has(id)) into.set(id, at);
    return got.size;
  }

  async stale(owner: string, beforeMs: number): Promise<InFlight[]> {
    return [...(this.sets.get(owner) ?? [])].filter(([, at]) => at < beforeMs).map(([id, at]) => ({ id, at }));
  }

  async count(owner: string): Promise<number> {
    return this.sets.get(owner)?.size ?? 0;
  }
}
