// Advisory locks that order moment creation against friendship changes of the same principal.
// A `friends` moment is inserted (and its friend list read) under a shared lock on its author; a
// friendship is created or removed under exclusive locks on both principals. So a moment either sees the
// new friendship (and is pushed to the new friend's timeline) or commits before it (and the rebuild that
// follows the friendship's invalidation finds it in Postgres). Without it, a moment committing between a
// friendship and the rebuild it triggers could be missing from the cached timeline.
import type { TransactionSql } from "postgres";

const NAMESPACE = 7_261_003;

/** A stable int4 key for a principal id (FNV-1a). */
function principalLockKey(id: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < id.length; i++) {
    h ^= id.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return h | 0;
}

export async function lockAuthorShared(tx: TransactionSql, author: string): Promise<void> {
  await tx`select pg_advisory_xact_lock_shared(${NAMESPACE}::int, ${principalLockKey(author)}::int)`;
}

/** Exclusive locks on both principals, taken in key order so two such transactions never deadlock. */
export async function lockPair(tx: TransactionSql, a: string, b: string): Promise<void> {
  const [k1, k2] = [principalLockKey(a), principalLockKey(b)].sort((x, y) => x - y) as [number, number];
  await tx`select pg_advisory_xact_lock(${NAMESPACE}::int, ${k1}::int), pg_advisory_xact_lock(${NAMESPACE}::int, ${k2}::int)`;
}
