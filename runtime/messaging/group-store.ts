// Postgres side of group messages stored once (migration 0010): members' cursors, reading a group past a cursor,
// and the marks that keep a redelivery's count honest. The sends and acks themselves are in store.ts (one
// statement per batch, with the direct messages' logic).
import type { TransactionSql } from "postgres";
import type { Sql } from "../db/client.ts";
import { type MessageRow, toMessage } from "./payload.ts";

/** delivered_seq while one of the member's sockets takes the group live: everything may have been delivered. */
export const LIVE = "9223372036854775807";

/** A group message read past a cursor: its number, its JSON payload, and its delivery count for this read. */
export interface GroupEntry {
  thread: bigint;
  seq: number;
  id: string;
  payload: string;
  deliveryCount: number;
}

/** The groups of each of `members` (one statement for many: long polls starting together ask at once). */
export async function groupsOfMembers(sql: Sql, members: string[]): Promise<Map<string, bigint[]>> {
  const rows = await sql<{ member: string; thread_id: bigint }[]>`
    select member, thread_id from group_cursors where member = any(${members}::text[])`;
  const out = new Map<string, bigint[]>(members.map((m) => [m, []]));
  for (const r of rows) out.get(r.member)?.push(r.thread_id);
  return out;
}

type BacklogRow = MessageRow & { seq: string | null; was: string | null; last: string; acked: string; above: string[] | null };

/** A read past cursors: the entries, each group's newest number as the read saw it, and each cursor read. */
export interface Backlog {
  entries: GroupEntry[];
  last: Map<bigint, number>;
  cursors: Map<bigint, { acked: number; above: number[] }>;
}

/**
 * What `member` has not acknowledged in `threads` (all their groups when null) after `after` (0: from the cursor),
 * oldest first per group, at most `limit`: each group's part is contiguous from where it starts but for the
 * messages acknowledged out of order. The same statement raises the member's delivered_seq to the last number read;
 * each entry counts 2 when a read or a live socket may have delivered it before, else 1. `last` holds each group's
 * newest number in the same snapshot: when fewer than `limit` came, the member has read that group up to it.
 */
export async function groupBacklog(sql: Sql, member: string, threads: bigint[] | null, limit: number, after = 0): Promise<Backlog> {
  const rows = await sql<BacklogRow[]>`
    with c as (
      select gc.*, g.last_seq from group_cursors gc join groups g on g.id = gc.thread_id
      where gc.member = ${member} ${threads === null ? sql`` : sql`and gc.thread_id = any(${threads.map(String)}::bigint[])`}
    ),
    r as (
      select m.id, m.thread_id, m.seq, m.sender, m.recipient, m.body, m.created_at, m.attachments, c.delivered_seq as was
      from c join messages m on m.thread_id = c.thread_id and m.seq > greatest(c.acked_seq, ${after}) and m.seq is not null
      where not exists (select 1 from group_acks a where a.member = c.member and a.thread_id = c.thread_id and a.seq = m.seq)
      order by m.thread_id, m.seq
      limit ${limit}
    ),
    top as (select thread_id, max(seq) as seq from r group by thread_id),
    raised as (
      update group_cursors gc set delivered_seq = top.seq from top
      where gc.member = ${member} and gc.thread_id = top.thread_id and gc.delivered_seq < top.seq
    )
    select c.thread_id, c.last_seq as last, c.acked_seq as acked,
           (select array_agg(a.seq::text) from group_acks a where a.member = c.member and a.thread_id = c.thread_id) as above,
           r.id, r.seq, r.sender, p.display_name as sender_name, r.recipient, r.body,
           r.created_at, r.attachments, r.was
    from c left join r on r.thread_id = c.thread_id left join principals p on p.id = r.sender
    order by c.thread_id, r.seq`;
  const last = new Map<bigint, number>();
  const cursors = new Map<bigint, { acked: number; above: number[] }>();
  const entries: GroupEntry[] = [];
  for (const r of rows) {
    last.set(r.thread_id, Number(r.last));
    cursors.set(r.thread_id, { acked: Number(r.acked), above: (r.above ?? []).map(Number) });
    if (r.seq === null || r.was === null) continue;
    entries.push({
      thread: r.thread_id,
      seq: Number(r.seq),
      id: r.id.toString(),
      payload: JSON.stringify(toMessage(r)),
      deliveryCount: BigInt(r.seq) <= BigInt(r.was) ? 2 : 1,
    });
  }
  return { entries, last, cursors };
}

/** Group messages stored once that `where` selects (`m` messages), in number order, as a publish carries them. */
async function groupRows(sql: Sql, where: ReturnType<Sql>, limit: number | null): Promise<{ thread: bigint; seq: number; id: string; payload: string }[]> {
  const rows = await sql<(MessageRow & { seq: string })[]>`
    select m.id, m.thread_id, m.seq, m.sender, p.display_name as sender_name, m.recipient, m.body, m.created_at, m.attachments
    from messages m left join principals p on p.id = m.sender
    where ${where} and m.seq is not null
    order by m.thread_id, m.seq
    ${limit === null ? sql`` : sql`limit ${limit}`}`;
  return rows.map((r) => ({ thread: r.thread_id, seq: Number(r.seq), id: r.id.toString(), payload: JSON.stringify(toMessage(r)) }));
}

/** Messages numbered after `after` in a group, in order, at most `limit` (to fill a gap a node saw). */
export function groupMessagesAfter(sql: Sql, thread: bigint, after: number, limit: number): Promise<{ seq: number; id: string; payload: string }[]> {
  return groupRows(sql, sql`m.thread_id = ${String(thread)} and m.seq > ${after}`, limit);
}

/** Of these message ids, the group messages stored once: their group, number and payload (to publish them again). */
export async function groupMessagesById(sql: Sql, ids: string[]): Promise<{ thread: bigint; seq: number; id: string; payload: string }[]> {
  if (ids.length === 0) return [];
  return groupRows(sql, sql`m.id = any(${ids}::bigint[])`, null);
}

/**
 * Members' sockets started (`live`) or stopped taking groups live. Started: delivered_seq becomes LIVE, so if the
 * node dies, every message of the group counts as possibly delivered on the next read. Stopped cleanly: it becomes
 * the last number the node published to the socket.
 */
export async function markLive(sql: Sql, items: { member: string; thread: bigint; seq: number | null }[]): Promise<void> {
  if (items.length === 0) return;
  await sql`
    update group_cursors gc set delivered_seq = case when v.seq is null then ${LIVE}::bigint
      when gc.delivered_seq = ${LIVE}::bigint then greatest(v.seq, gc.acked_seq) else greatest(gc.delivered_seq, v.seq) end
    from unnest(${items.map((i) => i.member)}::text[], ${items.map((i) => String(i.thread))}::bigint[],
                ${items.map((i) => (i.seq === null ? null : String(i.seq)))}::bigint[]) as v(member, thread_id, seq)
    where gc.member = v.member and gc.thread_id = v.thread_id`;
}

/**
 * Members join a group (inside the transaction that inserts them into thread_members): their cursors start at the
 * group's newest message, read under the group row's lock so no send numbers a message between. Already members keep
 * theirs. Returns the cursors made (GroupDelivery.membersChanged puts them into the remembered cursors).
 */
export async function joinGroup(tx: TransactionSql, thread: bigint, members: string[]): Promise<{ member: string; acked: number }[]> {
  const rows = await tx<{ member: string; acked_seq: string }[]>`
    insert into group_cursors (member, thread_id, acked_seq, joined_seq, delivered_seq)
    select m.p, g.id, g.last_seq, g.last_seq, g.last_seq
    from (select id, last_seq from groups where id = ${String(thread)} for update) g, unnest(${members}::text[]) as m(p)
    on conflict do nothing
    returning member, acked_seq`;
  return rows.map((r) => ({ member: r.member, acked: Number(r.acked_seq) }));
}

/** A member leaves a group (inside the transaction that removes them): their cursor and acks go. */
export async function leaveGroup(tx: TransactionSql, thread: bigint, member: string): Promise<void> {
  await tx`delete from group_cursors where member = ${member} and thread_id = ${String(thread)}`;
  await tx`delete from group_acks where member = ${member} and thread_id = ${String(thread)}`;
}

/** An account is deleted: its cursors and acks in every group go. */
export async function forgetMember(sql: Sql | TransactionSql, member: string): Promise<void> {
  await sql`delete from group_cursors where member = ${member}`;
  await sql`delete from group_acks where member = ${member}`;
}
