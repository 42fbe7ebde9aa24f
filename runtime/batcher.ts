// Group commit: concurrent callers' items go together in one call (to Postgres: one statement, so many sends or
// acks share one commit and one WAL flush; to Redis: one script over many mailboxes). With nothing in flight an
// item runs at once (no added latency); under load the items that arrive while a batch is running form the next.
// A Postgres `run` retries its own statement when picked as a deadlock victim (runtime/db/errors.ts).

type Outcome<O> = O | Error;

/** A thrown value as one item's outcome. */
export function asError(err: unknown): Error {
  return err instanceof Error ? err : new Error(String(err));
}

interface Waiting<I, O> {
  item: I;
  resolve: (o: O) => void;
  reject: (e: unknown) => void;
}

export class Batcher<I, O> {
  private queue: Waiting<I, O>[] = [];
  private inFlight = 0;
  private drained: (() => void)[] = [];

  /** `run` answers one outcome per item, in order: a value, or an Error for that item alone. */
  constructor(
    private readonly run: (items: I[]) => Promise<Outcome<O>[]>,
    private readonly concurrency = 2,
    private readonly max = 256,
  ) {}

  push(item: I): Promise<O> {
    return new Promise<O>((resolve, reject) => {
      this.queue.push({ item, resolve, reject });
      this.kick();
    });
  }

  /** Resolves once every item pushed so far has its answer (on shutdown: before the connection is closed). */
  drain(): Promise<void> {
    if (this.inFlight === 0 && this.queue.length === 0) return Promise.resolve();
    return new Promise((resolve) => this.drained.push(resolve));
  }

  private kick(): void {
    while (this.inFlight < this.concurrency && this.queue.length > 0) {
      const batch = this.queue.splice(0, this.max);
      this.inFlight++;
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
          this.kick();
          if (this.inFlight === 0 && this.queue.length === 0) for (const resolve of this.drained.splice(0)) resolve();
        });
    }
  }
}
