// Blocks, mutes and thread mutes in Postgres (migration 0026). Making a block ends the pair's friendship and drops
// their pending friend requests in the same statement, under the pair's lock (locks-store.ts), so a friendship made
// meanwhile is ordered against it.
import type { TransactionSql } from "postgres";
import { type AuthorRow, toAuthor } from "../../schema/avatar-path.ts";
import type { Author } from "../../schema/common.ts";
import type { Sql } from "../db/client.ts";

/** What a principal's blocks and mutes are, as one node caches them (blocks.ts). */
export interface RelationRows {
  /** Whom the principal blocked. */
  blocking: string[];
  /** Who blocked the principal. */
  blockedBy: string[];
  /** Whom the principal muted. */
  muted: string[];
}

/** Every block either way and every mute of `me`: one statement. */
export async function relationsOf(sql: Sql, me: string): Promise<RelationRows> {
  const rows = await sql<{ k: "b" | "B" | "m"; id: string }[]>`
    select 'b' as k, blocked as id from blocks where blocker = ${me}
    union all select 'B', blocker from blocks where blocked = ${me}
    union all select 'm', muted from mutes where principal = ${me}`;
  const out: RelationRows = { blocking: [], blockedBy: [], muted: [] };
  for (const r of rows) (r.k === "b" ? out.blocking : r.k === "B" ? out.blockedBy : out.muted).push(r.id);
  return out;
}

/** What making a block came to. */
export type BlockOutcome = "blocked" | "already" | "no_principal" | "full";

/**
 * `me` blocks `other`, in the caller's transaction (after lockPair): the block stored (at most `max` per blocker), the
 * friendship of the two ended and their pending requests dropped. `friends`: whether a friendship ended.
 */
export async function insertBlock(
  tx: TransactionSql,
  me: string,
  other: string,
  max: number,
): Promise<{ outcome: BlockOutcome; friends: boolean }> {
  const [row] = await tx<{ known: boolean; had: boolean; full: boolean; added: boolean; friends: boolean }[]>`
    with st as (
      select exists (select 1 from principals where id = ${other}) as known,
             exists (select 1 from blocks where blocker = ${me} and blocked = ${other}) as had,
             (select count(*) from (select 1 from blocks where blocker = ${me} limit ${max}) n) >= ${max} as full),
    ins as (
      insert into blocks (blocker, blocked) select ${me}, ${other} from st where st.known and not st.had and not st.full
      returning 1),
    fr as (
      delete from friendships
      where exists (select 1 from st where st.known and (st.had or not st.full))
        and ((principal = ${me} and friend = ${other}) or (principal = ${other} and friend = ${me}))
      returning 1),
    req as (
      update friend_requests set status = 'withdrawn', responded_at = now()
      where exists (select 1 from st where st.known and (st.had or not st.full)) and status = 'pending'
        and ((from_id = ${me} and to_id = ${other}) or (from_id = ${other} and to_id = ${me})))
    select st.known, st.had, st.full, exists (select 1 from ins) as added, exists (select 1 from fr) as friends from st`;
  if (!row?.known) return { outcome: "no_principal", friends: false };
  if (row.had) return { outcome: "already", friends: row.friends };
  if (row.full) return { outcome: "full", friends: false };
  return { outcome: "blocked", friends: row.friends };
}

/** `me` unblocks `other`: false when there was no such block. Pending requests made meanwhile are dropped. */
export async function deleteBlock(sql: Sql, me: string, other: string): Promise<boolean> {
  const [row] = await sql<{ n: number }[]>`
    with del as (delete from blocks where blocker = ${me} and blocked = ${other} returning 1),
    req as (
      update friend_requests set status = 'withdrawn', responded_at = now()
      where exists (select 1 from del) and status = 'pending'
        and ((from_id = ${me} and to_id = ${other}) or (from_id = ${other} and to_id = ${me})))
    select count(*)::int as n from del`;
  return (row?.n ?? 0) > 0;
}

/** `me` mutes `other`: its outcome (`full` past `max`). */
export async function insertMute(sql: Sql, me: string, other: string, max: number): Promise<BlockOutcome> {
  const [row] = await sql<{ known: boolean; had: boolean; full: boolean }[]>`
    with st as (
      select exists (select 1 from principals where id = ${other}) as known,
             exists (select 1 from mutes where principal = ${me} and muted = ${other}) as had,
             (select count(*) from (select 1 from mutes where principal = ${me} limit ${max}) n) >= ${max} as full),
    ins as (
      insert into mutes (principal, muted) select ${me}, ${other} from st where st.known and not st.had and not st.full
      on conflict do nothing)
    select * from st`;
  if (!row?.known) return "no_principal";
  return row.had ? "already" : row.full ? "full" : "blocked";
}

export async function deleteMute(sql: Sql, me: string, other: string): Promise<boolean> {
  const r = await sql`delete from mutes where principal = ${me} and muted = ${other}`;
  return r.count > 0;
}

/** `me` mutes the thread `thread`: false when `me` is no member of it; `full` past `max`. */
export async function insertThreadMute(
  sql: Sql,
  me: string,
  thread: bigint,
  max: number,
): Promise<"muted" | "no_thread" | "full"> {
  const [row] = await sql<{ member: boolean; had: boolean; full: boolean }[]>`
    with st as (
      select exists (select 1 from thread_members where thread_id = ${String(thread)} and principal = ${me}) as member,
             exists (select 1 from thread_mutes where principal = ${me} and thread_id = ${String(thread)}) as had,
             (select count(*) from (select 1 from thread_mutes where principal = ${me} limit ${max}) n) >= ${max} as full),
    ins as (
      insert into thread_mutes (principal, thread_id) select ${me}, ${String(thread)} from st
      where st.member and not st.had and not st.full on conflict do nothing)
    select * from st`;
  if (!row?.member) return "no_thread";
  return !row.had && row.full ? "full" : "muted";
}

/** `me` unmutes the thread: false when `me` is no member of it (unmuting one not muted is fine). */
export async function deleteThreadMute(sql: Sql, me: string, thread: bigint): Promise<boolean> {
  const [row] = await sql<{ member: boolean }[]>`
    with del as (delete from thread_mutes where principal = ${me} and thread_id = ${String(thread)})
    select exists (select 1 from thread_members where thread_id = ${String(thread)} and principal = ${me}) as member`;
  return row?.member ?? false;
}

/** One entry of a list of blocks or mutes. */
export interface RelationEntry {
  principal: Author;
  created_at: Date;
}

/**
 * A page of `me`'s blocks (`table` blocks) or mutes, newest first, after the entry of `before` (a principal id), at
 * most `limit` + 1 (the extra one tells has_more).
 */
export async function relationPage(
  sql: Sql,
  table: "blocks" | "mutes",
  me: string,
  before: string | undefined,
  limit: number,
): Promise<RelationEntry[]> {
  const [owner, other] = table === "blocks" ? ["blocker", "blocked"] : ["principal", "muted"];
  const t = sql(table);
  const o = sql(owner!);
  const x = sql(other!);
  const after =
    before === undefined
      ? sql``
      : sql`and (r.created_at, r.${x}) < (select created_at, ${x} from ${t} where ${o} = ${me} and ${x} = ${before})`;
  const rows = await sql<(AuthorRow & { created_at: Date })[]>`
    select p.id, p.display_name, p.avatar_key, r.created_at
    from ${t} r join principals p on p.id = r.${x}
    where r.${o} = ${me} ${after}
    order by r.created_at desc, r.${x} desc
    limit ${limit + 1}`;
  return rows.map((r) => ({ principal: toAuthor(r), created_at: r.created_at }));
}
