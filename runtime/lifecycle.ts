// A node's parts in one order: each is started (or built) by name, in the order startNode runs them, and stopped
// in the reverse order, once, by stop(). A start that fails stops what had started. The order is stated in
// docs/ARCHITECTURE.md (the parts) and test/lifecycle.test.ts holds the code to it through `trace`. Each start is
// timed (`startMs`, logged by startNode when the node listens), so the slow step of a slow start is named.
import type { Logger } from "./log.ts";

/** Sees each part start ("start <name>", once it has) and stop ("stop <name>", before it does). */
export type Trace = (event: string) => void;

interface Started {
  name: string;
  stop: () => Promise<void> | void;
}

export class Lifecycle {
  private readonly started: Started[] = [];
  /** How long each part took to start, in ms, in the order they started (`postgres`, `engines`, ...). */
  readonly startMs: Record<string, number> = {};

  constructor(
    private readonly log: Logger,
    private readonly trace: Trace = () => {},
  ) {}

  /** Start (or build) the part `name`; `stop` runs when the node stops, in the reverse order of the starts. */
  async add<T>(name: string, start: () => T | Promise<T>, stop?: (part: T) => Promise<void> | void): Promise<T> {
    const t0 = performance.now();
    const part = await start();
    const ms = Math.round(performance.now() - t0);
    this.startMs[name] = ms;
    this.log.debug({ part: name, ms }, "part started");
    this.started.push({ name, stop: () => stop?.(part) });
    this.trace(`start ${name}`);
    return part;
  }

  /** Stop every started part, the last started first; a part that fails to stop is logged and the rest still stop. */
  async stop(): Promise<void> {
    for (const { name, stop } of this.started.splice(0).reverse()) {
      this.trace(`stop ${name}`);
      try {
        await stop();
      } catch (err) {
        this.log.warn({ err, part: name }, "a part of the node failed to stop");
      }
    }
  }
}
