// Write-behind to Postgres for what a redelivery can make up for: writes are keyed, merged while they wait, and
// go in one batched statement every little while, off the delivery path. Used for delivery counts
// (runtime/messaging/hub.ts: a node writes its waiting counts before it rebuilds a mailbox). Losing a batch (a
// crash, Postgres down past the retries) costs a count that is behind; a mailbox lost and rebuilt counts a message
// it no longer held as delivered at least once (runtime/scripts/mailboxSeed-5.lua).
import type { Logger } from "../log.ts";

/** Writes waiting for the next batch before one is started at once. */
const MAX_PENDING = 20_000;
/** A failed batch is tried again this many times (merged into the next), then dropped with a warning. */
const RETRIES = 3;

export interface WriteBehindOptions<V> {
  /** How often waiting writes go out. */
  everyMs: number;
  /** Which of two waiting writes of one key to keep (the newer by default). */
  merge?: (older: V, newer: V) => V;
  /**
   * Write nothing younger than one interval (it goes in the batch after next): a write that is usually made moot
   * soon after it is recorded (a delivery count, by the ack that follows it) is then mostly forgotten before it
   * costs a statement. A key already waiting that long keeps its place: a newer value recorded for it goes out with
   * the next batch. Past MAX_PENDING new writes, the next batch goes at once (the new ones still wait one more).
   */
  settle?: boolean;
  /** The timer batches go by (tests drive their own); the default is an unref'd setTimeout. */
  timer?: BatchTimer;
}

export interface BatchTimer {
  set(fn: () => void, ms: number): unknown;
  clear(handle: unknown): void;
}

const realTimer: BatchTimer = {
  set: (fn, ms) => setTimeout(fn, ms).unref(),
  clear: (h) => clearTimeout(h as NodeJS.Timeout),
};

export class WriteBehind<V> {
  /** Recorded since the last batch. */
  private pending = new Map<string, V>();
  /** With `settle`: recorded before the last batch, so at least one interval old at the next. */
  private settled = new Map<string, V>();
  private timer: unknown;
  private readonly clock: BatchTimer;
  private flushing: Promise<void> = Promise.resolve();
  private readonly merge: (older: V, newer: V) => V;

  constructor(
    private readonly what: string,
    private readonly write: (rows: V[]) => Promise<unknown>,
    private readonly log: Logger,
    private readonly opts: WriteBehindOptions<V>,
  ) {
    this.merge = opts.merge ?? ((_, newer) => newer);
    this.clock = opts.timer ?? realTimer;
  }

  record(key: string, value: V): void {
    const old = this.settled.get(key);
    if (old !== undefined) {
      this.settled.set(key, this.merge(old, value));
      return;
    }
    const cur = this.pending.get(key);
    this.pending.set(key, cur === undefined ? value : this.merge(cur, value));
    if (this.pending.size >= MAX_PENDING) {
      this.tick();
    } else {
      this.arm();
    }
  }

  /** Drop a waiting write (it need not happen any more). */
  forget(key: string): void {
    this.pending.delete(key);
    this.settled.delete(key);
  }

  /** Write everything that waits now, however young; resolves once it (and every earlier batch) is written or given up. */
  flush(): Promise<void> {
    const batch = this.settled;
    for (const [k, v] of this.pending) batch.set(k, v);
    this.pending = new Map();
    this.settled = new Map();
    return this.writeOut(batch);
  }

  private arm(): void {
    this.timer ??= this.clock.set(() => this.tick(), this.opts.everyMs);
  }

  private tick(): void {
    if (this.timer !== undefined) this.clock.clear(this.timer);
    this.timer = undefined;
    if (!this.opts.settle) {
      void this.flush();
      return;
    }
    const batch = this.settled;
    this.settled = this.pending;
    this.pending = new Map();
    if (this.settled.size > 0) this.arm();
    void this.writeOut(batch);
  }

  private writeOut(batch: Map<string, V>): Promise<void> {
    if (this.timer !== undefined && this.pending.size === 0 && this.settled.size === 0) {
      this.clock.clear(this.timer);
      this.timer = undefined;
    }
    if (batch.size === 0) return this.flushing;
    this.flushing = this.flushing.then(() => this.writeWithRetries(batch));
    return this.flushing;
  }

  private async writeWithRetries(batch: Map<string, V>): Promise<void> {
    for (let attempt = 0; ; attempt++) {
      try {
        await this.write([...batch.values()]);
        return;
      } catch (err) {
        if (attempt >= RETRIES) {
          this.log.warn({ err, rows: batch.size }, `${this.what} not written`);
          return;
        }
        await new Promise((r) => setTimeout(r, 100 * 2 ** attempt));
      }
    }
  }
}
