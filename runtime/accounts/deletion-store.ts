// The statements of an account's deletion (runtime/accounts/delete.ts) that the cascade does not do: the account's
// row locked and deleted, the like and comment counters of other moments lowered by what goes with it, and what the
// caches must be told afterwards (its moments).
import type { TransactionSql } from "postgres";
import type { CountsRow } from "../social/moment-reads-store.ts";

/**
 * Locks the principal's row (a like or comment being written by it holds a key-share lock on the row, so this waits
 * for it, and any later one fails its foreign key); false when there is no such principal.
 */
export async function lockAccount(tx: TransactionSql, id: string): Promise<boolean> {
  const [me] = await tx`select 1 from principals where id = ${id} for update`;
  return me !== undefined;
}

/** Deletes the account's likes, lowering each liked moment's like count (raising its `rev`): the new counts. */
export function dropLikesBy(tx: TransactionSql, id: string): Promise<CountsRow[]> {
  return tx<CountsRow[]>`
      with l as (delete from moment_likes where principal = ${id} returning moment),
      n as (select moment, count(*)::int as n from l group by moment)
      update moments m set like_count = m.like_count - n.n, rev = m.rev + 1 from n where m.id = n.moment
      returning m.id, m.like_count, m.comment_count, m.rev`;
}

/** Deletes the account's comments, lowering each moment's comment count (raising its `rev`): the new counts. */
export function dropCommentsBy(tx: TransactionSql, id: string): Promise<CountsRow[]> {
  return tx<CountsRow[]>`
      with c as (delete from moment_comments where author = ${id} returning moment),
      n as (select moment, count(*)::int as n from c group by moment)
      update moments m set comment_count = m.comment_count - n.n, rev = m.rev + 1 from n where m.id = n.moment
      returning m.id, m.like_count, m.comment_count, m.rev`;
}

/** The ids of the account's moments. */
export async function momentsBy(tx: TransactionSql, id: string): Promise<bigint[]> {
  const rows = await tx<{ id: bigint }[]>`select id from moments where author = ${id}`;
  return rows.map((m) => m.id);
}

/** The ids of the account's public moments. */
export async function publicMomentsBy(tx: TransactionSql, id: string): Promise<bigint[]> {
  const rows = await tx<{ id: bigint }[]>`select id from moments where author = ${id} and visibility = 'public'`;
  return rows.map((m) => m.id);
}

/** Deletes the principal's row, and with it everything its foreign keys cascade to. */
export async function deletePrincipal(tx: TransactionSql, id: string): Promise<void> {
  await tx`delete from principals where id = ${id}`;
}
