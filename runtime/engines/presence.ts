// Presence: which principals hold a live connection somewhere in the cluster.

export interface PresenceEngine {
  /** Record connection `connId` of `principal`, alive until nowMs + ttlMs unless refreshed. True when the principal just came online. */
  connect(principal: string, connId: string, nowMs: number, ttlMs: number): Promise<boolean>;
  /** Drop one connection. True when the principal has no live connection left. */
  disconnect(principal: string, connId: string, nowMs: number): Promise<boolean>;
  /** The subset of `principals` online at nowMs. */
  online(principals: string[], nowMs: number): Promise<Set<string>>;
}
