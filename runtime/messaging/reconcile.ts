// Every committed message reaches its stream's sockets and long polls, even when the node that sent it died between its
// Postgres commit and its publish. Before a send batch's statement the node records the batch's message ids as in
// flight (runtime/engines/nodes.ts InFlightRegistry, one call per batch), and drops them once published. Every node,
// every PASS_MS: it claims the in-flight messages of nodes whose lease ended (a dead node stops renewing:
// runtime/node-lease.ts), and takes its in-flight messages older than STALE_MS (claimed, or its own whose publish
// failed), reads which of them Postgres committed, and publishes those again (a node's channel ignores a number it has
// published already; a long poll reads Postgres anyway). A message a node dies with is published within LEASE_MS +
// PASS_MS (about 6 s) of its commit.
import type { Services } from "../services.ts";

const PASS_MS = 1000;
/** A node's own in-flight message this old has had time for its append: it is checked. */
export const STALE_MS = 3000;
/** An in-flight message Postgres still does not have after this long was never committed: dropped. */
const GIVE_UP_MS = 60_000;
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
          if (!this.failing)
            this.svc.log.warn(
              { err: err instanceof Error ? err.message : String(err) },
              "in-flight messages not reconciled (until a backend returns)",
            );
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

  /** One pass (what the timer runs; a call while one runs joins it). Answers how many messages it published again. */
  pass(): Promise<number> {
    this.running ??= this.passOnce().finally(() => {
      this.running = undefined;
    });
    return this.running;
  }

  private async passOnce(): Promise<number> {
    const { engines, log } = this.svc;
    const now = this.now();
    for (const dead of await engines.inflight.expired(now)) {
      if (dead === this.owner) continue;
      const moved = await engines.inflight.claim(dead, this.owner, now);
      if (moved > 0)
        log.warn({ node: dead, messages: moved }, "took over the messages in flight of a node whose lease ended");
    }
    const stale = (await engines.inflight.stale(this.owner, now - STALE_MS)).slice(0, PASS_MAX);
    if (stale.length === 0) return 0;
    const committed = await this.svc.hub.streams.redeliver(stale.map((e) => e.id));
    const done = stale.filter((e) => committed.has(e.id) || e.at < now - GIVE_UP_MS).map((e) => e.id);
    await engines.inflight.done(this.owner, done);
    return committed.size;
  }
}
