// Which recipients must be paid. Each node caches every looked-up agent's marketplace row (a send to a free
// agent costs no extra query); PATCH /v1/agents/me broadcasts a change on pub/sub and every node drops its copy.
// A copy also expires TERMS_TTL_MS after it was read (on the node's clock), so a change whose broadcast was lost
// (published while Redis was down) is seen within that bound.
import type { Core } from "../services.ts";
import { CHANNELS, listen, publish } from "../engines/node-channels.ts";
import type { AssetTable } from "./assets.ts";
import { ApiError } from "../errors.ts";
import { paidTerms, type PaidAgentRow } from "./settings.ts";
import type { Terms } from "./protocol.ts";
import { settingsOf } from "./settings-store.ts";

const CACHE_MAX = 100_000;
/** How long a cached row is trusted without an invalidation. */
export const TERMS_TTL_MS = 30_000;

interface Cached {
  row: PaidAgentRow | null;
  expiresAt: number;
}

export class PaidAgents {
  private readonly rows = new Map<string, Cached>();
  private starting: Promise<void> | undefined;

  constructor(private readonly svc: Core & { assets: AssetTable }) {}

  /** Subscribe to invalidations (startNode does, before any request; a lookup would too). */
  start(): Promise<void> {
    this.starting ??= listen(this.svc.engines.pubsub, CHANNELS.paymentsTerms, this.svc.log, (id) => {
      this.rows.delete(id);
    }).then(() => undefined);
    return this.starting;
  }

  /** The marketplace row of `principal` (null: none), from the cache or Postgres. */
  async row(principal: string): Promise<PaidAgentRow | null> {
    await this.start();
    const now = this.svc.now();
    const hit = this.rows.get(principal);
    if (hit !== undefined && hit.expiresAt > now) return hit.row;
    const row = await settingsOf(this.svc.sql, principal);
    if (this.rows.size >= CACHE_MAX) this.rows.clear();
    this.rows.set(principal, { row: row ?? null, expiresAt: now + TERMS_TTL_MS });
    return row ?? null;
  }

  /**
   * The terms of a paid recipient, null for a free one. A paid agent whose network this node cannot settle on
   * is refused (503) rather than messaged for free.
   */
  async terms(principal: string): Promise<Terms | null> {
    const row = await this.row(principal);
    if (!row?.x402_enabled || row.price_micros === null) return null;
    const t = paidTerms(this.svc.assets, row);
    if (!t)
      throw new ApiError("unavailable", `this agent is paid on ${row.network}, which this server does not settle on`);
    return t;
  }

  /** After a change of `principal`'s settings: every node forgets its copy. */
  async changed(principal: string): Promise<void> {
    this.rows.delete(principal);
    await publish(this.svc.engines.pubsub, CHANNELS.paymentsTerms, principal);
  }
}
