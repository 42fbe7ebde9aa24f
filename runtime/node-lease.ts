// This node's id lease (runtime/engines/nodes.ts): taken at start, renewed every RENEW_MS while the node runs, given
// up when it stops. A renewal that finds the id held by another live node (the lease was lost: Redis restarted
// empty and a new node took the id first, or this node stalled past its lease) takes a free id and switches the
// node's IdGenerator to it, so two live nodes generate under one node id only until the next renewal (at most
// RENEW_MS after Redis is back); a message insert that meets an id taken meanwhile is stored under a new id
// (runtime/messaging/messages-store.ts IdClash). A node started with NODE_ID keeps that id whatever the registry says.
import { randomBytes } from "node:crypto";
import type { NodeRegistry } from "./engines/nodes.ts";
import type { IdGenerator } from "./ids.ts";
import type { Logger } from "./log.ts";

/** How long a lease lasts unrenewed: a node killed holds its id (and counts as alive) this long at most. */
export const LEASE_MS = 5000;
/** How often a live node renews its lease. */
const RENEW_MS = 1500;

interface NodeLeaseOptions {
  /** A node id set by configuration: kept (and leased, so other nodes see it held) whatever happens. */
  fixed?: number;
  now?: () => number;
}

export class NodeLease {
  /** Who this node process is in the registry: random per start. */
  readonly owner = randomBytes(12).toString("hex");
  private ids: IdGenerator | undefined;
  private timer: NodeJS.Timeout | undefined;
  private renewing: Promise<void> | undefined;
  private failing = false;
  private announced: { release: string; layout: number } | undefined;
  private readonly now: () => number;

  private constructor(
    private readonly registry: NodeRegistry,
    private readonly log: Logger,
    public id: number,
    private readonly opts: NodeLeaseOptions,
  ) {
    this.now = opts.now ?? Date.now;
  }

  /** Lease a node id (the configured one when `fixed`). */
  static async take(registry: NodeRegistry, log: Logger, opts: NodeLeaseOptions = {}): Promise<NodeLease> {
    const lease = new NodeLease(registry, log, opts.fixed ?? -1, opts);
    const now = lease.now();
    if (opts.fixed !== undefined) {
      if (!(await registry.renew(lease.owner, opts.fixed, now, LEASE_MS)))
        log.warn({ nodeId: opts.fixed }, "configured NODE_ID is held by another live node");
      return lease;
    }
    const id = await registry.acquire(lease.owner, now, LEASE_MS);
    if (id === null) throw new Error("no free node id: 1024 live nodes hold one each");
    lease.id = id;
    return lease;
  }

  /** Renew every RENEW_MS from now on, switching `ids` to a new node id if this one is lost. */
  start(ids: IdGenerator): void {
    this.ids = ids;
    this.timer ??= setInterval(() => void this.renew(), RENEW_MS).unref();
  }

  /** One renewal (what the timer runs; a call while one runs joins it). */
  renew(): Promise<void> {
    this.renewing ??= this.renewOnce().finally(() => {
      this.renewing = undefined;
    });
    return this.renewing;
  }

  /**
   * Keep `release` (JSON, runtime/release.ts) announced under this lease, and the keyspace's layout at least
   * `layout`: said again at each renewal, so what a Redis restart lost is back within RENEW_MS.
   */
  async announce(release: string, layout: number): Promise<void> {
    this.announced = { release, layout };
    await this.registry.announce(this.owner, release, this.now());
  }

  private async renewOnce(): Promise<void> {
    try {
      const held = await this.registry.renew(this.owner, this.id, this.now(), LEASE_MS);
      if (this.announced) {
        await this.registry.announce(this.owner, this.announced.release, this.now());
        await this.registry.layout(this.announced.layout);
      }
      if (this.failing) this.log.info({ nodeId: this.id }, "node id lease renewed again");
      this.failing = false;
      if (held || this.opts.fixed !== undefined) {
        if (!held) this.log.warn({ nodeId: this.id }, "configured NODE_ID is held by another live node");
        return;
      }
      const next = await this.registry.acquire(this.owner, this.now(), LEASE_MS);
      if (next === null) {
        this.log.error({ nodeId: this.id }, "node id held by another live node and no id is free");
        return;
      }
      this.log.warn({ from: this.id, to: next }, "node id held by another live node: switched to a free one");
      this.id = next;
      this.ids?.switchTo(next);
    } catch (err) {
      if (!this.failing) this.log.warn({ err, nodeId: this.id }, "node id lease not renewed");
      this.failing = true;
    }
  }

  /** Stop renewing and give the id up. */
  async stop(): Promise<void> {
    clearInterval(this.timer);
    this.timer = undefined;
    await this.renewing;
    await this.registry.release(this.owner, this.id).catch(() => {});
  }
}
