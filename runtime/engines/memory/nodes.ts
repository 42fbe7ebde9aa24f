// Node id leases in process, by the same rules as the Redis scripts (runtime/scripts/node*-2.lua). One embedded
// node holds id 0 unless something else holds it.
import type { NodeRegistry } from "../nodes.ts";

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
