// Cache writes that failed after Postgres committed (Redis down, refusing or timing out) are not lost: the moments
// whose counts could not be written and the timelines that could not be dropped are kept in small per-node sets
// and written again every EVERY_MS until Redis takes them. A moment's counts are read again from Postgres and
// stored by revision (an older one never overwrites a newer), so the retry is right whatever happened meanwhile.
// A set at its bound drops its oldest entry; for that one, and for a node that dies with entries still in its
// sets, the backstop is the cache's own lifetime (a moment record 10 minutes, a timeline 24 hours).
import type { Logger } from "../log.ts";
import type { Services } from "../services.ts";
import { countsOf, momentCounts } from "./moment-reads-store.ts";

const EVERY_MS = 1000;
const MAX = 10_000;
/** Moments re-read from Postgres per statement. */
const CHUNK = 1000;

export class CacheRepair {
  private readonly moments = new Set<bigint>();
  private readonly timelines = new Set<string>();
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> | undefined;

  constructor(
    private readonly svc: Pick<Services, "sql" | "engines">,
    private readonly log: Logger,
  ) {}

  /** Moments whose counts Postgres committed but the record cache did not take. */
  counts(ids: bigint[]): void {
    for (const id of ids) add(this.moments, id);
  }

  /** Timelines Postgres's changes made wrong that could not be dropped. */
  invalidate(names: string[]): void {
    for (const n of names) add(this.timelines, n);
  }

  /** How many cache writes are waiting to be repaired. */
  get size(): number {
    return this.moments.size + this.timelines.size;
  }

  start(): void {
    this.timer ??= setInterval(() => void this.pass(), EVERY_MS);
    this.timer.unref();
  }

  async stop(): Promise<void> {
    clearInterval(this.timer);
    await this.running;
  }

  /** One repair pass (no two at once); what fails stays for the next. */
  pass(): Promise<void> {
    if (this.size === 0) return Promise.resolve();
    this.running ??= this.repair()
      .catch((err: unknown) => this.log.debug({ err, waiting: this.size }, "cache repair: not yet"))
      .finally(() => {
        this.running = undefined;
      });
    return this.running;
  }

  private async repair(): Promise<void> {
    if (this.timelines.size > 0) {
      const names = [...this.timelines];
      await this.svc.engines.feed.invalidate(names);
      for (const n of names) this.timelines.delete(n);
    }
    while (this.moments.size > 0) {
      const ids = [...this.moments].slice(0, CHUNK);
      const rows = await countsOf(this.svc.sql, ids);
      await this.svc.engines.moments.counts(momentCounts(rows));
      for (const id of ids) this.moments.delete(id); // a moment no longer in Postgres left a tombstone (forget)
      this.log.info({ moments: ids.length, stored: rows.length }, "cache repair: moment counts written again");
    }
  }
}

function add<T>(set: Set<T>, v: T): void {
  if (set.size >= MAX && !set.has(v)) set.delete(set.values().next().value as T);
  set.add(v);
}
