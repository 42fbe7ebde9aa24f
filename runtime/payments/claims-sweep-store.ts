// The statement of the claim sweeper (runtime/payments/sweep.ts): claims left `claimed` too long are marked failed,
// not retryable, with a reason that says the outcome is unknown.
import type { Sql } from "../db/client.ts";

export const ABANDONED_REASON = "interrupted: the server stopped before the settlement's outcome was known";

/** Marks failed the claims untouched for `olderThanMs` (by the database's clock); how many were. */
export async function sweepAbandonedClaims(sql: Sql, olderThanMs: number): Promise<number> {
  const rows = await sql`
    update payments set status = 'failed', retryable = false, reason = ${ABANDONED_REASON}, updated_at = now()
    where status = 'claimed' and updated_at < now() - make_interval(secs => ${olderThanMs / 1000})
    returning id`;
  return rows.length;
}
