// In-process presence: connection ids per principal with an expiry each, as the Redis sorted sets hold them.
import type { PresenceEngine } from "../presence.ts";

export class MemoryPresence implements PresenceEngine {
  private readonly conns = new Map<string, Map<string, number>>();

  private live(principal: string, nowMs: number): Map<string, number> | undefined {
    const m = this.conns.get(principal);
    if (!m) return undefined;
    for (const [id, until] of m) if (until <= nowMs) m.delete(id);
    if (m.size === 0) {
      this.conns.delete(principal);
      return undefined;
    }
    return m;
  }

  async connect(principal: string, connId: string, nowMs: number, ttlMs: number): Promise<boolean> {
    let m = this.live(principal, nowMs);
    const cameOnline = !m;
    if (!m) {
      m = new Map();
      this.conns.set(principal, m);
    }
    m.set(connId, nowMs + ttlMs);
    return cameOnline;
  }

  async refresh(conns: { principal: string; connId: string }[], nowMs: number, ttlMs: number): Promise<void> {
    for (const c of conns) await this.connect(c.principal, c.connId, nowMs, ttlMs);
  }

  async disconnect(principal: string, connId: string, nowMs: number): Promise<boolean> {
    const m = this.conns.get(principal);
    const removed = m?.delete(connId) ?? false;
    return this.live(principal, nowMs) === undefined && removed;
  }

  async online(principals: string[], nowMs: number): Promise<Set<string>> {
    const out = new Set<string>();
    for (const p of principals) if (this.live(p, nowMs)) out.add(p);
    return out;
  }
}
