// Group commit: concurrent callers' items go together in one call (to Postgres: one statement, so many sends or
// acks share one commit and one WAL flush; to Redis: one script over many keys). With nothing in flight an
// item runs at once (no added latency); under load the items that arrive while a batch is running form the next.
// A Postgres `run` retries its own statement when picked as a deadlock victim (runtime/db/errors.ts).

type Outcome<O> = O | Error;

const monotonic = () => performance.now();

/** A thrown value as one item's outcome. */
export function asError(err: unknown): Error {
  return err instanceof Error ? err : new Error(String(err));
}

interface Waiting<I, O> {
  item: I;
  resolve: (o: O) => void;
  reject: (e: unknown) => void;
  /** When it was pushed (performance.now()), for `maxWait`. */
  at: number;
}

/**
 * An item that waited longer than `ms` for its batch (behind a stuck one) is not run: it fails with `error()`, so a
 * caller who already gave up is never committed for later.
 */
interface MaxWait {
  ms: number;
  error: () => Error;
  now?: () => number;
}

export class Batcher<I, O> {
  private queue: Waiting<I, O>[] = [];
  private inFlight = 0;
  /** Items in the batches under way. */
  private running = 0;
  private drained: (() => void)[] = [];

  /** `run` answers one outcome per item, in order: a value, or an Error for that item alone. */
  constructor(
    private readonly run: (items: I[]) => Promise<Outcome<O>[]>,
    private readonly concurrency = 2,
    private readonly max = 256,
    private readonly maxWait?: MaxWait,
  ) {}

  push(item: I): Promise<O> {
    const at = this.maxWait ? (this.maxWait.now ?? monotonic)() : 0;
    return new Promise<O>((resolve, reject) => {
      this.queue.push({ item, resolve, reject, at });
      this.kick();
    });
  }

  /** Items pushed and not answered yet: waiting for a batch, or in one under way (the queue gauges read it). */
  get pending(): number {
    return this.queue.length + this.running;
  }

  /** Resolves once every item pushed so far has its answer (on shutdown: before the connection is closed). */
  drain(): Promise<void> {
    if (this.inFlight === 0 && this.queue.length === 0) return Promise.resolve();
    return new Promise((resolve) => this.drained.push(resolve));
  }

  private kick(): void {
    while (this.inFlight < this.concurrency && this.queue.length > 0) {
      const batch = this.fresh(this.queue.splice(0, this.max));
      if (batch.length === 0) continue;
      this.inFlight++;
      this.running += batch.length;
      this.run(batch.map((w) => w.item))
        .then(
          (outs) => {
            batch.forEach((w, i) => {
              const o = outs[i];
              if (o instanceof Error) w.reject(o);
              else w.resolve(o as O);
            });
          },
          (err: unknown) => {
            for (const w of batch) w.reject(err);
          },
        )
        .finally(() => {
          this.inFlight--;
          this.running -= batch.length;
          this.kick();
          this.checkDrained();
        });
    }
    this.checkDrained();
  }

  private checkDrained(): void {
    if (this.inFlight === 0 && this.queue.length === 0) for (const resolve of this.drained.splice(0)) resolve();
  }

  /** The items still worth running; those that waited past maxWait fail. */
  private fresh(batch: Waiting<I, O>[]): Waiting<I, O>[] {
    if (!this.maxWait) return batch;
    const { ms, error, now = monotonic } = this.maxWait;
    const oldest = now() - ms;
    return batch.filter((w) => {
      if (w.at >= oldest) return true;
      w.reject(error());
      return false;
    });
  }
}
