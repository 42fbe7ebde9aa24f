// Write-behind to Postgres for what a redelivery can make up for: writes are keyed, merged while they wait, and
// go in one batched statement every little while, off the delivery path. Used for delivery counts (a mailbox
// rebuilt after a Redis flush keeps counting where it was, give or take the last batch) and for acknowledgements
// the mailbox already took (runtime/messaging/hub.ts). Losing a batch (a crash, Postgres down past the retries)
// costs at most a redelivery.
import type { Logger } from "../log.ts";

/** Writes waiting for the next batch before one is started at once. */
const MAX_PENDING = 20_000;
/** A failed batch is tried again this many times (merged into the next), then dropped with a warning. */
const RETRIES = 3;

export class WriteBehind<V> {
  private pending = new Map<string, V>();
  private timer: NodeJS.Timeout | undefined;
  private flushing: Promise<void> = Promise.resolve();

  constructor(
    private readonly what: string,
    private readonly write: (rows: V[]) => Promise<unknown>,
    private readonly log: Logger,
    private readonly intervalMs: number,
    /** Which of two waiting writes of one key to keep (the newer by default). */
    private readonly merge: (older: V, newer: V) => V = (_, newer) => newer,
  ) {}

  record(key: string, value: V): void {
    const cur = this.pending.get(key);
    this.pending.set(key, cur === undefined ? value : this.merge(cur, value));
    if (this.pending.size >= MAX_PENDING) {
      void this.flush();
    } else if (!this.timer) {
      this.timer = setTimeout(() => void this.flush(), this.intervalMs);
      this.timer.unref();
    }
  }

  /** Drop a waiting write (it need not happen any more). */
  forget(key: string): void {
    this.pending.delete(key);
  }

  /** Write what waits now; resolves once it (and every earlier batch) is written or given up. */
  flush(): Promise<void> {
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    if (this.pending.size === 0) return this.flushing;
    const batch = this.pending;
    this.pending = new Map();
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
