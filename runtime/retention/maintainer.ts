// The retention maintainer (docs/ARCHITECTURE.md, "Retention"): every node runs one, and one pass at a time runs
// anywhere, under a transaction-level advisory lock (a node killed mid-pass lets it go with its connection; the
// next pass of any node takes it). A pass creates the partitions of `messages` ahead of time, moves the cursors over
// the messages past the horizon, drops the partitions wholly past it, and removes moments past theirs in batches.
import type { Sql } from "../db/client.ts";
import { firstIdAt, idTime } from "../ids.ts";
import type { Logger } from "../log.ts";
import { formatRetention } from "./duration.ts";
import type { Horizons } from "./horizons.ts";
import { expireMoments } from "./moments-store.ts";
import { createPartition, dropDefaultBelow, dropPartition, expireCursors, markOf, partitions } from "./partitions-store.ts";

/** With hashtext(current_schema()): the advisory lock one pass at a time holds. */
export const LOCK_ID = 7_261_034;
const MINUTE = 60_000;
const DAY = 86_400_000;
/** How often a node tries a pass. */
export const PASS_EVERY_MS = 30_000;
/** Moments removed per pass at most: a bounded delete, never a sweep of the table. */
const MOMENTS_PER_PASS = 5_000;

/** A partition spans a quarter of the retention (so at most a quarter more than it is kept), a minute to a day. */
export function spanFor(retentionMs: number | null): number {
  if (retentionMs === null) return DAY;
  return Math.min(DAY, Math.max(MINUTE, Math.floor(retentionMs / 4 / MINUTE) * MINUTE));
}

/** What one pass did (null: another node's pass held the lock). */
export interface PassResult {
  created: string[];
  dropped: string[];
  cursorsMoved: number;
  momentsRemoved: number;
}

export class RetentionMaintainer {
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<unknown> = Promise.resolve();
  private failing = false;
  private readonly span: number;

  constructor(
    private readonly sql: Sql,
    private readonly horizons: Horizons,
    private readonly now: () => number,
    private readonly log: Logger,
  ) {
    this.span = spanFor(horizons.messagesMs);
  }

  /** The first pass (partitions ahead before the node listens), then one every PASS_EVERY_MS. */
  async start(): Promise<void> {
    await this.tick();
    this.timer = setInterval(() => void this.tick(), PASS_EVERY_MS);
    this.timer.unref();
  }

  async stop(): Promise<void> {
    clearInterval(this.timer);
    await this.running;
  }

  private tick(): Promise<unknown> {
    this.running = this.pass().then(
      (r) => {
        if (this.failing) this.log.info("retention pass works again");
        this.failing = false;
        if (r && (r.created.length || r.dropped.length || r.momentsRemoved)) this.log.info(r, "retention pass");
      },
      (err: unknown) => {
        // one line per failing streak: an outage is the circuits' to report
        if (!this.failing) this.log.warn({ err }, "retention pass failed; the next one retries");
        this.failing = true;
      },
    );
    return this.running;
  }

  /** One pass, if no other node's is running: what it did, or null. */
  async pass(): Promise<PassResult | null> {
    return this.sql.begin(async (tx) => {
      // per schema: nodes of other deployments sharing the database keep their own passes
      const [got] = await tx<{ ok: boolean }[]>`select pg_try_advisory_xact_lock(${LOCK_ID}, hashtext(current_schema())) as ok`;
      if (!got?.ok) return null;
      // a drop or a create waits for the statements using the table, and every later statement queues behind it:
      // one that cannot have its lock at once gives up and is tried again next pass, never stalling sends for long
      await tx`set local lock_timeout = '200ms'`;
      const now = this.now();
      const result: PassResult = { created: [], dropped: [], cursorsMoved: 0, momentsRemoved: 0 };
      const parts = await partitions(tx);

      // ahead: to two spans or ten minutes past now, whichever is further, each range ending on the span's grid
      const until = firstIdAt(now + Math.max(2 * this.span, 10 * MINUTE));
      let top = parts.at(-1)?.hi ?? firstIdAt(now);
      while (top < until) {
        const next = firstIdAt((Math.floor(idTime(top) / this.span) + 1) * this.span);
        result.created.push(await createPartition(tx, top, next));
        top = next;
      }

      if (this.horizons.messagesMs !== null) {
        const horizon = this.horizons.messages();
        const mark = await markOf(tx, "messages");
        if (horizon > mark) result.cursorsMoved = await expireCursors(tx, mark, horizon);
        for (const p of parts) {
          if (p.hi > horizon) break;
          await dropPartition(tx, p.name);
          result.dropped.push(p.name);
        }
        await dropDefaultBelow(tx, horizon);
      }
      if (this.horizons.momentsMs !== null) result.momentsRemoved = await expireMoments(tx as unknown as Sql, this.horizons.moments(), MOMENTS_PER_PASS);
      return result;
    });
  }

  /** For the log line at start. */
  describe(): Record<string, string> {
    return {
      messages: formatRetention(this.horizons.messagesMs),
      moments: formatRetention(this.horizons.momentsMs),
      partitionSpan: formatRetention(this.span),
    };
  }
}
