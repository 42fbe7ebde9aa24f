// The retention maintainer (docs/ARCHITECTURE.md, "Retention"): every node runs one, and one pass at a time runs
// anywhere, under an advisory lock its connection holds (a node killed mid-pass lets it go with its connection; the
// next pass of any node takes it: pass-store.ts). A pass creates the partitions of `messages` ahead of time, moves
// the cursors over the messages past the horizon (and takes the bodies out of the answers kept for their sends'
// Idempotency-Keys), drops the partitions wholly past it, removes the rows of the files those messages carried,
// removes moments past theirs in batches, and, where no autovacuum runs, vacuums the tables whose dead rows passed
// autovacuum's rule.
import { setTimeout as delay } from "node:timers/promises";
import type { Sql } from "../db/client.ts";
import { firstIdAt, idTime } from "../ids.ts";
import type { Logger } from "../log.ts";
import { formatRetention } from "./duration.ts";
import type { Horizons } from "./horizons.ts";
import { blankExpiredAnswers, forgetExpiredFiles } from "./expired-store.ts";
import { expireMoments } from "./moments-store.ts";
import {
  createPartition,
  dropDefaultBelow,
  dropPartition,
  expireCursors,
  markOf,
  partitions,
} from "./partitions-store.ts";
import { autovacuumOn, tablesPastVacuumRule, vacuumTable } from "./vacuum-store.ts";
import { releasePassLock, shortTransaction, tryPassLock } from "./pass-store.ts";

const MINUTE = 60_000;
const DAY = 86_400_000;
/** How often a node tries a pass. */
export const PASS_EVERY_MS = 30_000;
/** Moments removed per pass at most: a bounded delete, never a sweep of the table. */
const MOMENTS_PER_PASS = 1_000;
/** Messages gone past the horizon whose cursors one transaction moves over, at most. */
const SLICE = 10_000;
/** Rows of expired messages' files (message_files) one statement removes at most. */
const FILE_ROWS_PER_DELETE = 10_000;
/** Tables one pass vacuums at most (the most dead rows first); the next pass takes the rest. */
const VACUUMS_PER_PASS = 4;
/**
 * How long a partition's create or drop waits for its locks before it gives up (lock_timeout), how many times a pass
 * tries it, and the pause between tries. Every statement on `messages` queues behind a DDL statement waiting for the
 * table's lock, so the wait is what traffic stalls for: a 60-minute soak with 200 ms showed stalls of 120-240 ms a few
 * times an hour (bench/RESULTS.md, "Soak").
 */
const DDL_LOCK_TIMEOUT_MS = 50;
const DDL_TRIES = 5;
const DDL_RETRY_GAP_MS = 500;
/**
 * How long any other step of a pass (the cursors' move, the default partition's trim) waits for a lock: these take
 * row locks that sends hold for a commit, not the table's, so nothing queues behind their wait.
 */
const STEP_LOCK_TIMEOUT_MS = 200;
/** Postgres' lock_not_available: lock_timeout ran out (or NOWAIT). */
const LOCK_NOT_AVAILABLE = "55P03";

export interface MaintainerOptions {
  /** Messages gone past the horizon whose cursors one transaction moves over, at most. */
  slice?: number;
  /**
   * Whether the pass vacuums (where no autovacuum runs): "auto" asks the server at start (the embedded PGlite has
   * no autovacuum whatever its setting says, so the node passes true for it).
   */
  vacuum?: boolean | "auto";
  /**
   * The pause between two tries of a partition's create or drop whose lock was not had in time, ended early when
   * `stopped` aborts (stop() aborts it, and no try follows): by default a timer; a test passes its own to decide
   * when the next try comes.
   */
  pause?: (ms: number, stopped: AbortSignal) => Promise<void>;
}

/**
 * One step of a pass in its own transaction, waiting at most `lockTimeoutMs` for any lock: every later statement on
 * the table would queue behind it, so one that cannot have it soon fails (and is tried again).
 */
function short<T>(conn: Sql, step: (tx: Sql) => Promise<T>, lockTimeoutMs = STEP_LOCK_TIMEOUT_MS): Promise<T> {
  return shortTransaction(conn, step, lockTimeoutMs);
}

/** Resolves after `ms`, or as soon as `signal` aborts. */
function sleepUnless(ms: number, signal: AbortSignal): Promise<void> {
  return delay(ms, undefined, { signal }).catch(() => {});
}

/**
 * A partition spans a quarter of the retention (so at most a quarter more than it is kept, and about six partitions
 * live), at least a minute; 30 days when unlimited (a retention set later drops whole months).
 */
export function spanFor(retentionMs: number | null): number {
  if (retentionMs === null) return 30 * DAY;
  return Math.max(MINUTE, Math.floor(retentionMs / 4 / MINUTE) * MINUTE);
}

/** What one pass did (null: another node's pass held the lock). */
export interface PassResult {
  created: string[];
  dropped: string[];
  cursorsMoved: number;
  /** Answers kept for the Idempotency-Keys of expired messages' sends that lost their bodies. */
  answersBlanked: number;
  /** Rows of the files expired messages carried (message_files) removed. */
  fileRowsRemoved: number;
  momentsRemoved: number;
  /** Tables vacuumed, with the dead rows each had. */
  vacuumed: string[];
  /** Tries of a partition's create or drop that did not have its lock in time (and were tried again). */
  lockWaits: number;
}

export class RetentionMaintainer {
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<unknown> = Promise.resolve();
  private failing = false;
  private readonly span: number;
  private readonly slice: number;
  private readonly pause: (ms: number, stopped: AbortSignal) => Promise<void>;
  /** Aborted by stop(): a pause between DDL tries ends at once, and the pass ends with the error it had. */
  private readonly stopping = new AbortController();
  private vacuum: boolean | "auto";

  constructor(
    private readonly sql: Sql,
    private readonly horizons: Horizons,
    private readonly now: () => number,
    private readonly log: Logger,
    opts: MaintainerOptions = {},
  ) {
    this.span = spanFor(horizons.messagesMs);
    this.slice = opts.slice ?? SLICE;
    this.vacuum = opts.vacuum ?? "auto";
    this.pause = opts.pause ?? sleepUnless;
  }

  /**
   * A partition's create or drop: a short wait for its locks, tried DDL_TRIES times DDL_RETRY_GAP_MS apart while the
   * lock is what fails (a pass that still cannot have it fails, and the next pass tries again).
   */
  private async ddl<T>(conn: Sql, result: PassResult, step: (tx: Sql) => Promise<T>): Promise<T> {
    for (let tries = 1; ; tries++) {
      try {
        return await short(conn, step, DDL_LOCK_TIMEOUT_MS);
      } catch (err) {
        if (
          (err as { code?: string }).code !== LOCK_NOT_AVAILABLE ||
          tries >= DDL_TRIES ||
          this.stopping.signal.aborted
        )
          throw err;
        result.lockWaits++;
        await this.pause(DDL_RETRY_GAP_MS, this.stopping.signal);
        if (this.stopping.signal.aborted) throw err;
      }
    }
  }

  /** The first pass (partitions ahead before the node listens), then one every PASS_EVERY_MS. */
  async start(): Promise<void> {
    if (this.vacuum === "auto") this.vacuum = !(await autovacuumOn(this.sql));
    await this.tick();
    this.timer = setInterval(() => void this.tick(), PASS_EVERY_MS);
    this.timer.unref();
  }

  async stop(): Promise<void> {
    clearInterval(this.timer);
    this.stopping.abort();
    await this.running;
  }

  private tick(): Promise<unknown> {
    const started = performance.now();
    this.running = this.pass().then(
      (r) => {
        if (this.failing) this.log.info("retention pass works again");
        this.failing = false;
        const ms = Math.round(performance.now() - started);
        if (
          r &&
          (r.created.length ||
            r.dropped.length ||
            r.momentsRemoved ||
            r.cursorsMoved ||
            r.answersBlanked ||
            r.fileRowsRemoved ||
            r.vacuumed.length ||
            r.lockWaits)
        )
          this.log.info({ ...r, ms }, "retention pass");
      },
      (err: unknown) => {
        // one line per failing streak: an outage is the circuits' to report
        if (!this.failing) this.log.warn({ err }, "retention pass failed; the next one retries");
        this.failing = true;
      },
    );
    return this.running;
  }

  /**
   * One pass, if no other node's is running: what it did, or null. The lock is the session's, on a connection kept
   * for the pass; each step is its own short transaction, so a partition's create or drop holds the table's lock for
   * that one statement, and a step that fails leaves the ones before it done.
   */
  async pass(): Promise<PassResult | null> {
    const conn = await this.sql.reserve();
    try {
      if (!(await tryPassLock(conn))) return null;
      try {
        return await this.steps(conn);
      } finally {
        await releasePassLock(conn);
      }
    } finally {
      conn.release();
    }
  }

  private async steps(conn: Sql): Promise<PassResult> {
    const now = this.now();
    const result: PassResult = {
      created: [],
      dropped: [],
      cursorsMoved: 0,
      answersBlanked: 0,
      fileRowsRemoved: 0,
      momentsRemoved: 0,
      vacuumed: [],
      lockWaits: 0,
    };
    const parts = await short(conn, (tx) => partitions(tx));

    // ahead: to two spans or ten minutes past now, whichever is further, each range ending on the span's grid
    const until = firstIdAt(now + Math.max(2 * this.span, 10 * MINUTE));
    let top = parts.at(-1)?.hi ?? firstIdAt(now);
    while (top < until) {
      const lo = top;
      const next = firstIdAt((Math.floor(idTime(lo) / this.span) + 1) * this.span);
      result.created.push(await this.ddl(conn, result, (tx) => createPartition(tx, lo, next)));
      top = next;
    }

    if (this.horizons.messagesMs !== null) {
      const horizon = this.horizons.messages();
      // the cursors move over what went, a slice (at most SLICE messages) a transaction, up to the horizon
      let mark = await short(conn, (tx) => markOf(tx, "messages"));
      while (mark < horizon) {
        const from = mark;
        const moved = await short(conn, async (tx) => {
          const out = await expireCursors(tx, from, horizon, this.slice);
          result.answersBlanked += await blankExpiredAnswers(tx, from, out.to);
          return out;
        });
        result.cursorsMoved += moved.cursors;
        mark = moved.to;
      }
      // only then do the partitions wholly below the mark go
      for (const p of parts) {
        if (p.hi > mark) break;
        await this.ddl(conn, result, (tx) => dropPartition(tx, p.name));
        result.dropped.push(p.name);
      }
      await short(conn, (tx) => dropDefaultBelow(tx, mark));
      // the rows of the files the messages that went carried (reads ignore them already), a bounded delete each
      for (let n = FILE_ROWS_PER_DELETE; n === FILE_ROWS_PER_DELETE;) {
        n = await short(conn, (tx) => forgetExpiredFiles(tx, mark, FILE_ROWS_PER_DELETE));
        result.fileRowsRemoved += n;
      }
    }
    if (this.horizons.momentsMs !== null) {
      result.momentsRemoved = await expireMoments(conn, this.horizons.moments(), MOMENTS_PER_PASS);
    }
    // last, outside any transaction (VACUUM cannot run in one); it takes no lock that writers wait for
    if (this.vacuum === true) {
      for (const t of await tablesPastVacuumRule(conn, VACUUMS_PER_PASS)) {
        await vacuumTable(conn, t.table);
        result.vacuumed.push(`${t.table} (${t.dead} dead)`);
      }
    }
    return result;
  }

  /** For the log line at start. */
  describe(): Record<string, string> {
    return {
      messages: formatRetention(this.horizons.messagesMs),
      moments: formatRetention(this.horizons.momentsMs),
      partitionSpan: formatRetention(this.span),
      vacuum: this.vacuum === true ? "by this pass (no autovacuum)" : "autovacuum",
    };
  }
}
