// Every committed message reaches its stream's sockets and long polls, even when its publish never came (the node that
// sent it died between its Postgres commit and its append, or Redis failed the append): the position check. Every
// CHECK_MS each node reads, in ONE statement, the newest number Postgres holds of the streams it takes live (its
// Channels with sockets) or has waiters on (long polls, MCP sessions), at most CHECK_MAX streams a pass (more are
// taken in turn), and holds it against the last number it published to its sockets or saw for its waiters. A stream
// behind Postgres at two checks in a row (one check's interval gives a publish under way the time to arrive) is
// filled from the stream's log or Postgres (Channels.catchUp), and its waiters woken (they read Postgres). A message
// whose publish never came reaches live sockets and waiting polls within about 2 x CHECK_MS of its commit; streams
// nobody takes or waits on need nothing (a read past the cursor finds what is committed). Nothing is written per send.
import { outageOf } from "../circuit.ts";
import { timed } from "../metrics.ts";
import type { Core } from "../services.ts";
import type { Channels } from "./channels.ts";
import type { StreamStore } from "./core-stores.ts";
import type { StreamId } from "./stream-id.ts";
import type { WaiterRegistry } from "./waiters.ts";

/** How often a node checks its streams' positions against Postgres. */
export const CHECK_MS = 1000;
/** Most streams one check reads (one statement); a node with more takes them in turn, CHECK_MAX a pass. */
export const CHECK_MAX = 5000;

export class PositionCheck {
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<number> | undefined;
  /** Streams behind Postgres at their last check: the head Postgres had then. */
  private readonly behind = new Map<StreamId, number>();
  /** Where the next pass starts, when there are more streams than CHECK_MAX. */
  private offset = 0;
  /** A pass failed and none has passed since: an outage logs once when it starts and once when it ends. */
  private failing = false;

  constructor(
    private readonly svc: Pick<Core, "log" | "metrics" | "circuits">,
    private readonly store: StreamStore,
    private readonly channels: Channels,
    private readonly waiters: WaiterRegistry,
  ) {}

  /** Check every CHECK_MS from now on. */
  start(): void {
    this.timer ??= setInterval(() => void this.pass().catch(() => {}), CHECK_MS).unref();
  }

  async stop(): Promise<void> {
    clearInterval(this.timer);
    this.timer = undefined;
    await this.running?.catch(() => {});
  }

  /**
   * One check (what the timer runs; a call while one runs joins it). Answers how many streams it found behind twice
   * and caught up. Nothing is read while Postgres's circuit is open.
   */
  pass(): Promise<number> {
    this.running ??= this.passOnce()
      .then(
        (n) => {
          if (this.failing) this.svc.log.info("stream positions checked again");
          this.failing = false;
          return n;
        },
        (err: unknown) => {
          if (outageOf(err) === "postgres") this.svc.circuits.postgres.open(err);
          if (!this.failing)
            this.svc.log.warn(
              { err: err instanceof Error ? err.message : String(err) },
              "stream positions not checked (until Postgres answers)",
            );
          this.failing = true;
          throw err;
        },
      )
      .finally(() => {
        this.running = undefined;
      });
    return this.running;
  }

  /** The streams to check this pass, and what this node has of each now. */
  private watched(): StreamId[] {
    const all = new Set<StreamId>();
    for (const key of this.channels.live()) all.add(key);
    for (const key of this.waiters.streams()) all.add(key);
    for (const key of this.behind.keys()) if (!all.has(key)) this.behind.delete(key);
    const list = [...all];
    if (list.length <= CHECK_MAX) {
      this.offset = 0;
      return list;
    }
    if (this.offset >= list.length) this.offset = 0;
    const part = list.slice(this.offset, this.offset + CHECK_MAX);
    if (part.length < CHECK_MAX) part.push(...list.slice(0, CHECK_MAX - part.length));
    this.offset += CHECK_MAX;
    return part;
  }

  private async passOnce(): Promise<number> {
    if (this.svc.circuits.postgres.isOpen) return 0;
    const streams = this.watched();
    if (streams.length === 0) return 0;
    const heads = await timed(this.svc.metrics.postgres.streamHeads, () => this.store.heads(streams));
    const caught: Promise<void>[] = [];
    let found = 0;
    for (const key of streams) {
      // none yet: an inbox never written to (a group gone has no sockets or waiters for long)
      const head = heads.get(key) ?? 0;
      const was = this.behind.get(key);
      this.behind.delete(key);
      const published = this.channels.published(key);
      let seen = this.waiters.seen(key);
      // a stream first waited on since no read or message: this is where it is
      if (seen === undefined && this.waiters.has(key)) {
        this.waiters.saw(key, head);
        seen = head;
      }
      const socketsLate = published !== undefined && published < head;
      const waitersLate = seen !== undefined && seen < head;
      // behind at the check before too (by a message that had a check's interval to arrive): its publish never came
      const fill = socketsLate && was !== undefined && published! < was;
      const wake = waitersLate && was !== undefined && seen! < was;
      if (fill) caught.push(this.channels.catchUp(key));
      if (wake) {
        this.waiters.saw(key, head);
        this.waiters.wake(key, null);
      }
      if (fill || wake) found++;
      if ((socketsLate && !fill) || (waitersLate && !wake)) this.behind.set(key, head);
    }
    if (found > 0) this.svc.metrics.streamsBehind.inc(found);
    await Promise.all(caught);
    return found;
  }
}
