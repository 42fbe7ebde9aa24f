// Which people hold a push subscription, as every node knows it (docs/ARCHITECTURE.md, "Web Push"): read whole at the
// start, told at once, on every node, when someone's subscriptions change (the push.subscribers channel), and read
// again every RELOAD_MS, the net under a change whose event was lost (a Redis restart). A send asks it first, in
// memory: a recipient who holds none costs the send nothing more, not a statement nor a command.
import { CHANNELS, listen, publish } from "../engines/node-channels.ts";
import type { Core } from "../services.ts";
import { subscribers } from "./push-store.ts";

/** How often a node reads the whole set again. */
const RELOAD_MS = 60_000;

export class Subscribers {
  private held = new Set<string>();
  private unlisten: (() => Promise<void>) | undefined;
  private timer: NodeJS.Timeout | undefined;
  /** Changes heard while a reload reads: its read of them may be stale. */
  private overtaken: Map<string, boolean> | undefined;

  constructor(private readonly svc: Pick<Core, "sql" | "engines" | "log">) {}

  /** Listen for changes, read the set, and read it again every RELOAD_MS until `stop`. */
  async start(): Promise<void> {
    this.unlisten = await listen(this.svc.engines.pubsub, CHANNELS.pushSubscribers, this.svc.log, (e) =>
      this.heard(e.principal, e.has),
    );
    await this.reload();
    this.timer = setInterval(
      () => void this.reload().catch((err) => this.svc.log.warn({ err }, "push subscribers not read")),
      RELOAD_MS,
    );
    this.timer.unref();
  }

  async stop(): Promise<void> {
    clearInterval(this.timer);
    await this.unlisten?.();
  }

  /** Whether `principal` holds a subscription, as this node knows it. */
  has(principal: string): boolean {
    return this.held.has(principal);
  }

  /** People holding one, cluster-wide, as this node knows it. */
  get size(): number {
    return this.held.size;
  }

  /** `principal`'s subscriptions changed: whether they hold any now, told to every node (this one at once). */
  async changed(principal: string, has: boolean): Promise<void> {
    this.heard(principal, has);
    await publish(this.svc.engines.pubsub, CHANNELS.pushSubscribers, { principal, has }).catch((err: unknown) =>
      this.svc.log.warn({ err, principal }, "push subscribers change not announced"),
    );
  }

  private heard(principal: string, has: boolean): void {
    this.overtaken?.set(principal, has);
    if (has) this.held.add(principal);
    else this.held.delete(principal);
  }

  private async reload(): Promise<void> {
    const overtaken = new Map<string, boolean>();
    this.overtaken = overtaken;
    try {
      const next = new Set(await subscribers(this.svc.sql));
      for (const [p, has] of overtaken) {
        if (has) next.add(p);
        else next.delete(p);
      }
      this.held = next;
    } finally {
      if (this.overtaken === overtaken) this.overtaken = undefined;
    }
  }
}
