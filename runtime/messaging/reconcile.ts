// Every committed message reaches its recipients' mailboxes, even when the node that sent it died between its
// Postgres commit and its mailbox append. Before a send batch's statement the node records the batch's message
// ids as in flight (runtime/engines/nodes.ts InFlightRegistry, one call per batch), and drops them once appended.
// Every node, every PASS_MS: it claims the in-flight messages of nodes whose lease ended (a dead node stops
// renewing: runtime/node-lease.ts), and takes its in-flight messages older than STALE_MS (claimed, or its own
// whose append failed), reads which of them Postgres committed and who still has them unacknowledged, and appends
// them with `ensure` (only into built mailboxes that do not hold them and have not seen them acknowledged: a
// mailbox not built is rebuilt from Postgres anyway). A message a node dies with is in its mailboxes within
// LEASE_MS + PASS_MS (about 6 s) of its commit. A group message stored once is published again instead.
import type { Services } from "../services.ts";
import { type AppendItem, appendParts } from "../engines/mailbox.ts";
import { toMessage } from "./payload.ts";
import { committedDeliveries } from "./store.ts";

export const PASS_MS = 1000;
/** A node's own in-flight message this old has had time for its append: it is checked. */
export const STALE_MS = 3000;
/** An in-flight message Postgres still does not have after this long was never committed: dropped. */
export const GIVE_UP_MS = 60_000;
/** Most in-flight messages one pass checks. */
const PASS_MAX = 1000;

export class Reconciler {
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<number> | undefined;
  /** A pass failed and nothing has passed since: a backend outage logs once when it starts and once when it ends. */
  private failing = false;

  constructor(
    private readonly svc: Services,
    private readonly owner: string,
    private readonly now: () => number = svc.now,
  ) {}

  start(): void {
    this.timer ??= setInterval(() => {
      void this.pass().then(
        () => {
          if (this.failing) this.svc.log.info("in-flight messages reconciled again");
          this.failing = false;
        },
        (err: unknown) => {
          if (!this.failing) this.svc.log.warn({ err: err instanceof Error ? err.message : String(err) }, "in-flight messages not reconciled (until a backend returns)");
          this.failing = true;
        },
      );
    }, PASS_MS).unref();
  }

  async stop(): Promise<void> {
    clearInterval(this.timer);
    this.timer = undefined;
    await this.running?.catch(() => {});
  }

  /** One pass (what the timer runs; a call while one runs joins it). Answers how many appends it made sure of. */
  pass(): Promise<number> {
    this.running ??= this.passOnce().finally(() => {
      this.running = undefined;
    });
    return this.running;
  }

  private async passOnce(): Promise<number> {
    const { engines, sql, log } = this.svc;
    const now = this.now();
    for (const dead of await engines.inflight.expired(now)) {
      if (dead === this.owner) continue;
      const moved = await engines.inflight.claim(dead, this.owner, now);
      if (moved > 0) log.warn({ node: dead, messages: moved }, "took over the messages in flight of a node whose lease ended");
    }
    const stale = (await engines.inflight.stale(this.owner, now - STALE_MS)).slice(0, PASS_MAX);
    if (stale.length === 0) return 0;
    const started = performance.now();
    const { committed, rows } = await committedDeliveries(sql, stale.map((e) => e.id));
    // an ack between this read and the append is kept out by its tombstone, for ackMemoryMs: a slower read is redone
    if (performance.now() - started >= engines.mailboxes.ackMemoryMs / 2) return 0;
    const items: AppendItem[] = rows.map((r) => ({
      principal: r.to_principal,
      id: r.id.toString(),
      payload: JSON.stringify(toMessage(r)),
      ensure: true,
    }));
    // in parts, as a send's: a pass over many messages must not hold Redis for all their recipients at once
    if (items.length > 0) await Promise.all(appendParts(items, engines.mailboxes.appendPart).map((part) => engines.mailboxes.append(part)));
    // group messages stored once have no deliveries: they are published again, to the sockets and long polls of
    // their members (a node's channel ignores a number it has published already)
    await this.svc.hub.groups.redeliver([...committed]);
    const done = stale.filter((e) => committed.has(e.id) || e.at < now - GIVE_UP_MS).map((e) => e.id);
    await engines.inflight.done(this.owner, done);
    return items.length;
  }
}
