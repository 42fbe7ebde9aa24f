// Presence: which principals hold a live connection somewhere in the cluster. Each connection is an entry
// that expires unless refreshed, so a node that dies without saying goodbye is forgotten after the ttl.

export interface PresenceEngine {
  /** Record (or refresh) connection `connId` of `principal`, alive until nowMs + ttlMs. True when the principal just came online. */
  connect(principal: string, connId: string, nowMs: number, ttlMs: number): Promise<boolean>;
  /** Refresh many live connections at once (one round trip). */
  refresh(conns: { principal: string; connId: string }[], nowMs: number, ttlMs: number): Promise<void>;
  /** Drop one connection. True when the principal has no live connection left. */
  disconnect(principal: string, connId: string, nowMs: number): Promise<boolean>;
  /** The subset of `principals` online at nowMs. */
  online(principals: string[], nowMs: number): Promise<Set<string>>;
}
