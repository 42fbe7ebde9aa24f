// The settings a search's transaction runs under (runtime/search/bounded.ts): its own statement_timeout, and a plan
// made for its own words.
import type { TransactionSql } from "postgres";

/**
 * Bounds every later statement of `tx` to `statementMs`, and has each planned for its own parameters: postgres.js
 * prepares its statements, and a generic plan, made once for every text, cannot tell a rare word (the index) from a
 * common one (a thread newest first).
 */
export async function boundSearch(tx: TransactionSql, statementMs: number): Promise<void> {
  await tx.unsafe(`set local statement_timeout = ${statementMs}; set local plan_cache_mode = force_custom_plan`);
}
