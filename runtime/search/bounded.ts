// The bounds every search runs under (docs/ARCHITECTURE.md, "Search"; the README's limits table): beside its
// per-principal rate limit (runtime/limits/policies.ts, `search`), a node runs at most SEARCH_RUNNING searches at once,
// so searches never hold more than that many of the pool's connections and every other request still finds one; a
// few more wait their turn, and past that a search answers 503 at once. Each search's statement is bounded by
// SEARCH_STATEMENT_MS (its own statement_timeout, set for its transaction), and one that runs out answers 503 saying
// so, without opening the node's Postgres circuit (which a connection-class failure would). The embedded PGlite runs
// on the node's own thread with no timer to cancel a statement: there the indexes and the gate are the bound.
import type { TransactionSql } from "postgres";
import type { Sql } from "../db/client.ts";
import { ApiError } from "../errors.ts";
import { PastBound, ranPastBound } from "../http/slow-requests.ts";
import { boundSearch } from "./bounds-store.ts";

/** Searches one node runs at once (the pool has PG_POOL connections, 4 by default). */
export const SEARCH_RUNNING = 2;
/** Searches that may wait for one of those; one more answers 503. */
export const SEARCH_WAITING = 32;
/** A search statement's bound on a real server, in ms. */
export const SEARCH_STATEMENT_MS = 1000;

const RETRY_AFTER_S = 1;

const busy = () =>
  new ApiError(
    "unavailable",
    "too many searches are running on this node; retry shortly",
    { retry_after: RETRY_AFTER_S },
    { "Retry-After": String(RETRY_AFTER_S) },
  );

const tooLong = () =>
  new PastBound(
    "unavailable",
    `the search took longer than ${SEARCH_STATEMENT_MS} ms and was stopped; add words or narrow it with before`,
    { retry_after: RETRY_AFTER_S },
    { "Retry-After": String(RETRY_AFTER_S) },
  );

export class SearchGate {
  private running = 0;
  private readonly waiting: (() => void)[] = [];

  constructor(private readonly sql: Sql) {}

  /** Runs `query` in a transaction of its own within the bounds. */
  async run<T>(query: (tx: TransactionSql) => Promise<T>): Promise<T> {
    if (this.running >= SEARCH_RUNNING) {
      if (this.waiting.length >= SEARCH_WAITING) throw busy();
      await new Promise<void>((r) => this.waiting.push(r));
    } else {
      this.running++;
    }
    try {
      return (await this.sql.begin(async (tx) => {
        await boundSearch(tx, SEARCH_STATEMENT_MS);
        return query(tx);
      })) as T;
    } catch (err) {
      throw ranPastBound(err) ? tooLong() : err;
    } finally {
      const next = this.waiting.shift();
      if (next) next();
      else this.running--;
    }
  }
}
