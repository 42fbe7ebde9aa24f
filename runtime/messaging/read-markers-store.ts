// Postgres side of read markers (docs/ARCHITECTURE.md, "Read markers"): how far each member has read each thread
// (thread_members.read_through, a message id that only moves forward), the unread counts they give, and whether a
// principal tells the others (principals.read_receipts). The others see the marker as it stood when it last moved with
// receipts on (migration 0021: `shown` below), so turning receipts back on reveals nothing read while they were off.
import type { Author } from "../../schema/common.ts";
import { type AuthorRow, toAuthor } from "../../schema/avatar-path.ts";
import type { Sql } from "../db/client.ts";

/** Unread counts stop at this many per thread: a badge shows "999+" beyond it, and a count costs at most this. */
export const UNREAD_CAP = 1000;

export type MarkOutcome =
  /** The caller is not a member of the thread (or there is no such thread). */
  | { kind: "no_thread" }
  /** The message is not one of the thread's (or is past retention). */
  | { kind: "no_message" }
  /** The marker is at `through` now (it was there already, or further: `moved` false). */
  | {
      kind: "marked";
      through: bigint;
      /** False when the marker was there already or further. */
      moved: boolean;
      unread: number;
      /** Whether `me` tells the others (principals.read_receipts). */
      receipts: boolean;
      /** The thread's members, `me` included. */
      members: string[];
    };

/**
 * The count of one thread's messages from `me`'s others above `marker` (and above the horizon), but for a muted
 * thread's and muted or blocked senders', stopped at UNREAD_CAP: the one unread count the thread list, its total and a mark all use. `thread` and `marker` are SQL
 * expressions of the statement it goes in.
 */
export function unreadCount(sql: Sql, thread: ReturnType<Sql>, marker: ReturnType<Sql>, me: string, horizon: bigint) {
  // a thread `me` muted counts none; nor do messages of those `me` muted or blocked (docs/ARCHITECTURE.md, "Blocks
  // and mutes"): they are delivered and readable, but raise no count
  return sql`(select count(*)::int from (
    select 1 from messages um
    where um.thread_id = ${thread} and um.id > greatest(${marker}, ${String(horizon)}::bigint - 1) and um.sender <> ${me}
      and not exists (select 1 from thread_mutes tmu where tmu.principal = ${me} and tmu.thread_id = ${thread})
      and not exists (select 1 from mutes mu where mu.principal = ${me} and mu.muted = um.sender)
      and not exists (select 1 from blocks ub where ub.blocker = ${me} and ub.blocked = um.sender)
    limit ${UNREAD_CAP}
  ) unread)`;
}

/** The marker the other members see: read_through, or where it stood when it first moved with receipts off. */
const shown = (sql: Sql, tm: string) => sql`coalesce(${sql(tm)}.shown_through, ${sql(tm)}.read_through)`;

/**
 * Marks `thread` read by `me` through the message `through` (and every message before it), in one statement. The
 * marker only moves forward; the answer says where it is, and how many of the thread's messages from others are
 * still unread above it. A move with receipts off freezes what the others see where it was; one with them on is
 * told, and the others see the marker again.
 */
export async function markRead(
  sql: Sql,
  thread: bigint,
  me: string,
  through: bigint,
  horizon: bigint,
): Promise<MarkOutcome> {
  const [row] = await sql<
    {
      member: boolean;
      found: boolean;
      at: string | null;
      moved: boolean;
      unread: number;
      receipts: boolean;
      members: string[];
    }[]
  >`
    with m as (
      select 1 from messages where thread_id = ${String(thread)} and id = ${String(through)} and id >= ${String(horizon)}
    ),
    cur as (
      select read_through from thread_members where thread_id = ${String(thread)} and principal = ${me}
    ),
    upd as (
      update thread_members set read_through = ${String(through)},
        shown_through = case when coalesce((select read_receipts from principals where id = ${me}), true) then null
                             else coalesce(shown_through, read_through) end
      where thread_id = ${String(thread)} and principal = ${me} and read_through < ${String(through)} and exists (select 1 from m)
      returning read_through
    ),
    -- where the marker is after this statement (the update's row is not visible to the rest of it)
    at as (select greatest((select read_through from cur), ${String(through)}::bigint) as v)
    select exists (select 1 from cur) as member, exists (select 1 from m) as found,
           (select v::text from at) as at, exists (select 1 from upd) as moved,
           ${unreadCount(sql, sql`${String(thread)}::bigint`, sql`(select v from at)`, me, horizon)} as unread,
           coalesce((select read_receipts from principals where id = ${me}), true) as receipts,
           array(select principal from thread_members where thread_id = ${String(thread)}) as members`;
  if (!row?.member) return { kind: "no_thread" };
  if (!row.found) return { kind: "no_message" };
  return {
    kind: "marked",
    through: BigInt(row.at!),
    moved: row.moved,
    unread: row.unread,
    receipts: row.receipts,
    members: row.members,
  };
}

/** The caller's unread messages over all its threads: the sum of each thread's count (each capped at UNREAD_CAP). */
export async function unreadTotal(sql: Sql, me: string, horizon: bigint): Promise<number> {
  const [row] = await sql<{ n: number }[]>`
    select coalesce(sum(${unreadCount(sql, sql`tm.thread_id`, sql`tm.read_through`, me, horizon)}), 0)::int as n
    from thread_members tm
    where tm.principal = ${me}`;
  return row?.n ?? 0;
}

/**
 * How far the other members of `thread` have read it, those who tell (principals.read_receipts) and have read any of
 * it, the furthest first; null when `me` is not a member. One statement.
 */
export async function readsOf(
  sql: Sql,
  thread: bigint,
  me: string,
): Promise<{ member: Author; through: bigint }[] | null> {
  const rows = await sql<(Partial<AuthorRow> & { through: string | null })[]>`
    select p.id, p.display_name, p.avatar_key, ${shown(sql, "tm")}::text as through
    from thread_members me
    left join thread_members tm on tm.thread_id = me.thread_id and tm.principal <> me.principal and ${shown(sql, "tm")} > 0
    left join principals p on p.id = tm.principal and p.read_receipts
    where me.thread_id = ${String(thread)} and me.principal = ${me}
    order by ${shown(sql, "tm")} desc nulls last, tm.principal`;
  // no row: not a member; one row with nulls: a member, and nobody else has read (or tells)
  if (rows.length === 0) return null;
  return rows
    .filter((r) => r.id && r.through)
    .map((r) => ({ member: toAuthor(r as AuthorRow), through: BigInt(r.through!) }));
}
