// The retention pass's own statements (runtime/retention/maintainer.ts): the session-level advisory lock that lets
// one pass at a time run per schema, and the short transaction each step of a pass runs in, with its lock_timeout.
import type { Sql } from "../db/client.ts";

/** With hashtext(current_schema()): the advisory lock one pass at a time holds. */
export const LOCK_ID = 7_261_034;

/** Takes the pass's lock on the session `conn` if no other session holds it: whether it did. */
export async function tryPassLock(conn: Sql): Promise<boolean> {
  const [got] = await conn<
    { ok: boolean }[]
  >`select pg_try_advisory_lock(${LOCK_ID}, hashtext(current_schema())) as ok`;
  return got?.ok === true;
}

/** Gives the pass's lock up (on the session that took it). */
export async function releasePassLock(conn: Sql): Promise<void> {
  await conn`select pg_advisory_unlock(${LOCK_ID}, hashtext(current_schema()))`;
}

/**
 * Runs `step` on the session `conn` (a reserved connection) in a transaction of its own, waiting at most
 * `lockTimeoutMs` for any lock; commits what it did, or rolls it back and rethrows when it fails.
 */
export async function shortTransaction<T>(conn: Sql, step: (tx: Sql) => Promise<T>, lockTimeoutMs: number): Promise<T> {
  await conn`begin`;
  try {
    await conn.unsafe(`set local lock_timeout = '${Math.round(lockTimeoutMs)}ms'`);
    const out = await step(conn);
    await conn`commit`;
    return out;
  } catch (err) {
    await conn`rollback`.catch(() => {});
    throw err;
  }
}
