// Groups in Postgres (a group is a thread of kind 'group' with the same id): create one, read it as a member sees
// it, and change its members. The statements that change members run in the caller's transaction after it has
// locked the group's row (lockGroup), as a group send does first: one lock order. Members' stream cursors are
// stream-store.ts's (joinGroup, leaveGroup), in the same transactions.
import type { TransactionSql } from "postgres";
import type { Author } from "../../schema/common.ts";
import { type AuthorRow, toAuthor } from "../../schema/avatar-path.ts";
import type { Sql } from "../db/client.ts";

export interface GroupRow {
  id: bigint;
  name: string;
  owner: string | null;
  created_at: Date;
  is_member: boolean;
}

/** The group as `me` may see it: null when it does not exist or `me` is not a member. */
export async function loadGroup(sql: Sql, id: bigint, me: string): Promise<GroupRow | null> {
  const [row] = await sql<GroupRow[]>`
    select g.id, g.name, g.owner, g.created_at,
      exists (select 1 from thread_members where thread_id = g.id and principal = ${me}) as is_member
    from groups g where g.id = ${String(id)}`;
  return row?.is_member ? row : null;
}

/** A group's members, in the order they joined. */
export async function groupMembers(sql: Sql, id: bigint): Promise<Author[]> {
  const rows = await sql<AuthorRow[]>`
    select tm.principal as id, p.display_name, p.avatar_key
    from thread_members tm join principals p on p.id = tm.principal
    where tm.thread_id = ${String(id)}
    order by tm.joined_at, tm.principal`;
  return rows.map(toAuthor);
}

/** A new group, its thread and its members (joining in the order given: the creator first). */
export async function insertGroup(
  tx: TransactionSql,
  id: bigint,
  name: string,
  owner: string,
  members: string[],
): Promise<void> {
  await tx`insert into threads (id, kind) values (${String(id)}, 'group')`;
  await tx`insert into groups (id, name, owner) values (${String(id)}, ${name}, ${owner})`;
  // joined_at preserves the order given, the creator first
  await tx`
    insert into thread_members (thread_id, principal, joined_at)
    select ${String(id)}, m.p, now() + (m.n * interval '1 microsecond')
    from unnest(${members}::text[]) with ordinality as m(p, n)`;
}

/** Locks the group's row for the rest of the transaction (sends take this row too: one lock order). */
export async function lockGroup(tx: TransactionSql, id: bigint): Promise<void> {
  await tx`select 1 from groups where id = ${String(id)} for update`;
}

/** How many members the group would have with `wanted` added (those not in it yet). */
export async function sizeWith(tx: TransactionSql, id: bigint, wanted: string[]): Promise<number> {
  const [n] = await tx<
    { count: bigint }[]
  >`select count(*) as count from thread_members where thread_id = ${String(id)}`;
  const [fresh] = await tx<{ count: bigint }[]>`
    select count(*) as count from unnest(${wanted}::text[]) as w(p)
    where not exists (select 1 from thread_members where thread_id = ${String(id)} and principal = w.p)`;
  return Number(n!.count) + Number(fresh!.count);
}

/** Adds members, joining in the order given; those already in the group are left as they are. */
export async function insertMembers(tx: TransactionSql, id: bigint, wanted: string[]): Promise<void> {
  await tx`
    insert into thread_members (thread_id, principal, joined_at)
    select ${String(id)}, m.p, now() + (m.n * interval '1 microsecond')
    from unnest(${wanted}::text[]) with ordinality as m(p, n)
    on conflict do nothing`;
}

/**
 * Removes a member, and the files sent to it in the group with it (file_shares: it reads them no more, unless another
 * thread it is in still carries them, runtime/files/records.ts; joining again does not give them back, as one who
 * joins later is not given what was sent before); false when it was not one.
 */
export async function deleteMember(tx: TransactionSql, id: bigint, member: string): Promise<boolean> {
  const [row] = await tx<{ gone: boolean }[]>`
    with gone as (delete from thread_members where thread_id = ${String(id)} and principal = ${member} returning 1),
    shares as (
      delete from file_shares where principal = ${member} and thread_id = ${String(id)} and exists (select 1 from gone)
      returning 1
    )
    select exists (select 1 from gone) as gone, (select count(*) from shares) as shares`;
  return row?.gone === true;
}

/** Hands the group to its longest-standing member (none left: no owner). */
export async function handOver(tx: TransactionSql, id: bigint): Promise<void> {
  await tx`
    update groups set owner = (
      select principal from thread_members where thread_id = ${String(id)} order by joined_at, principal limit 1
    ) where id = ${String(id)}`;
}
