// Postgres side of read markers (docs/ARCHITECTURE.md, "Read markers"): how far each member has read each thread
// (thread_members.read_through, a message id that only moves forward), the unread counts they give, and whether a
// principal tells the others (principals.read_receipts).
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
 * Marks `thread` read by `me` through the message `through` (and every message before it). The marker only moves
 * forward; the answer says where it is, and how many of the thread's messages from others are still unread above it.
 */
export async function markRead(sql: Sql, thread: bigint, me: string, through: bigint, horizon: bigint): Promise<MarkOutcome> {
  const [row] = await sql<{ member: boolean; found: boolean; before: string | null; after: string | null; receipts: boolean; members: string[] }[]>`
    with m as (
      select 1 from messages where thread_id = ${String(thread)} and id = ${String(through)} and id >= ${String(horizon)}
    ),
    cur as (
      select read_through from thread_members where thread_id = ${String(thread)} and principal = ${me}
    ),
    upd as (
      update thread_members set read_through = ${String(through)}
      where thread_id = ${String(thread)} and principal = ${me} and read_through < ${String(through)} and exists (select 1 from m)
      returning read_through
    )
    select exists (select 1 from cur) as member, exists (select 1 from m) as found,
           (select read_through::text from cur) as before, (select read_through::text from upd) as after,
           coalesce((select read_receipts from principals where id = ${me}), true) as receipts,
           array(select principal from thread_members where thread_id = ${String(thread)}) as members`;
  if (!row?.member) return { kind: "no_thread" };
  if (!row.found) return { kind: "no_message" };
  const at = BigInt(row.after ?? row.before!);
  const unread = await unreadIn(sql, thread, me, at, horizon);
  return { kind: "marked", through: at, moved: row.after !== null, unread, receipts: row.receipts, members: row.members };
}

/** Messages of `thread` from others above `after` (and the horizon), counted up to UNREAD_CAP. */
async function unreadIn(sql: Sql, thread: bigint, me: string, after: bigint, horizon: bigint): Promise<number> {
  const from = after >= horizon ? after : horizon - 1n;
  const [row] = await sql<{ n: number }[]>`
    select count(*)::int as n from (
      select 1 from messages
      where thread_id = ${String(thread)} and id > ${String(from)} and sender <> ${me}
      limit ${UNREAD_CAP}
    ) u`;
  return row?.n ?? 0;
}

/** The caller's unread messages over all its threads: the sum of each thread's count (each capped at UNREAD_CAP). */
export async function unreadTotal(sql: Sql, me: string, horizon: bigint): Promise<number> {
  const [row] = await sql<{ n: number }[]>`
    select coalesce(sum(u.n), 0)::int as n
    from thread_members tm cross join lateral (
      select count(*) as n from (
        select 1 from messages m
        where m.thread_id = tm.thread_id and m.id > greatest(tm.read_through, ${String(horizon)}::bigint - 1) and m.sender <> ${me}
        limit ${UNREAD_CAP}
      ) x
    ) u
    where tm.principal = ${me}`;
  return row?.n ?? 0;
}
