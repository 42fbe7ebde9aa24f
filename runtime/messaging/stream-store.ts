// Postgres side of the streams (docs/ARCHITECTURE.md, "Messages"): a principal's inbox (thread 0 in its cursor
// row) and each group are streams of numbered messages; a member's state in one is a cursor (stream_cursors), the acks
// above it out of order (stream_acks), and how often what it was handed came again (handout_counts). Reading past a
// cursor, the marks that keep delivery counts honest, and joining and leaving. Sends are in messages-store.ts, acks in
// acks-store.ts.
import type { TransactionSql } from "postgres";
import type { Sql } from "../db/client.ts";
import type { Published } from "../engines/stream-log.ts";
import { shownColumns, shownJoins } from "./message-view-store.ts";
import { type MessageRow, toMessageAt } from "./payload.ts";
import { groupOf, groupStream, inboxStream, memberStream, type StreamId, threadOf } from "./stream-id.ts";

/** delivered_seq while one of the member's sockets takes the stream live: everything may have been delivered. */
export const LIVE = "9223372036854775807";

/** A message read past a cursor: its stream, number, JSON payload, and its delivery count for this read. */
export interface StreamEntry {
  stream: StreamId;
  seq: number;
  id: string;
  payload: string;
  deliveryCount: number;
}

/** A long poll's read: what it hands out, and how many unacknowledged messages went past retention meanwhile. */
export interface PollRead {
  entries: StreamEntry[];
  expired: number;
}

export type { Published };

/** The streams of each of `members`: their inbox first, then their groups (one statement for many). */
export async function streamsOfMembers(sql: Sql, members: string[]): Promise<Map<string, StreamId[]>> {
  const rows = await sql<{ member: string; thread_id: bigint }[]>`
    select member, thread_id from stream_cursors where member = any(${members}::text[]) and thread_id <> 0`;
  const out = new Map<string, StreamId[]>(members.map((m) => [m, [inboxStream(m)]]));
  for (const r of rows) out.get(r.member)?.push(groupStream(r.thread_id));
  return out;
}

type BacklogRow = MessageRow & {
  stream: bigint;
  seq: string | null;
  was: string;
  count: number | null;
  last: string;
  acked: string;
  above: string[] | null;
  expired: string | null;
};

/** A read past cursors: the entries, each stream's newest number as the read saw it, and each cursor read. */
export interface Backlog {
  entries: StreamEntry[];
  last: Map<StreamId, number>;
  cursors: Map<StreamId, { acked: number; above: number[]; expired: number }>;
}

/** A read past a member's cursors: one of its streams or all of them (null), after `after` (0: from the cursor). */
export interface Read {
  member: string;
  stream: StreamId | null;
  limit: number;
  after: number;
}

/**
 * Hand out what members have not acknowledged, for many reads in one statement (long polls and catch-ups starting
 * together share it): per read, oldest first, at most `limit` per stream, each stream's part contiguous from where it
 * starts but for the messages acknowledged out of order. The statement records what it hands out: an entry handed out
 * before counts one more than it did (the cursor's delivered_seq, and handout_counts past a second hand-out), and
 * delivered_seq rises to the newest number read (counts at or below the cursor, never read again, are dropped). A
 * caller that hands out less than it read (a long poll's merge cut at its limit) leaves the rest counted as possibly
 * delivered: on the safe side. Relaxed (no wait for the WAL flush): a count lost with a Postgres crash costs only a
 * lower `delivery_count` next time. `last` holds each stream's newest number in the same snapshot: when fewer than
 * `limit` came, the member has read it up to there. Messages below `horizon` (past retention) are gone: not read;
 * each cursor's `expired` (unacknowledged messages that went, runtime/retention/) is handed to this read once.
 */
export async function backlog(sql: Sql, reads: Read[], horizon: bigint): Promise<Backlog[]> {
  const rows = await sql<(BacklogRow & { n: number })[]>`
    with relaxed as (select set_config('synchronous_commit', 'off', true) as s),
    q as (
      select * from unnest(${reads.map((r) => r.member)}::text[], ${reads.map((r) => (r.stream === null ? null : String(threadOf(r.stream))))}::bigint[],
        ${reads.map((r) => r.limit)}::int[], ${reads.map((r) => r.after)}::bigint[]) with ordinality as q(member, thread, lim, after, n)
    ),
    c0 as (
      select q.n, q.lim, q.after, gc.member, gc.thread_id, gc.acked_seq, gc.delivered_seq, gc.expired
      from q join stream_cursors gc on gc.member = q.member and (q.thread is null or gc.thread_id = q.thread)
    ),
    c as (
      select c0.*, case when c0.thread_id = 0 then coalesce(i.last_seq, 0) else g.last_seq end as last_seq
      from c0 left join groups g on g.id = c0.thread_id left join inboxes i on c0.thread_id = 0 and i.principal = c0.member
      where c0.thread_id = 0 or g.id is not null
      union all
      select q.n, q.lim, q.after, q.member, 0, 0, 0, 0, 0 from q
      where (q.thread is null or q.thread = 0) and not exists (select 1 from c0 where c0.n = q.n and c0.thread_id = 0)
    ),
    r as (
      select c.n, c.member, c.thread_id as stream, x.*, c.delivered_seq as was, h.count as had from c cross join lateral (
        select * from (
          select m.id, m.thread_id, m.seq, m.sender, m.recipient, m.body, m.created_at, m.attachments, m.edited_at, m.deleted_at, m.reactions, m.reply from messages m
          where c.thread_id = 0 and m.recipient = c.member and m.seq > greatest(c.acked_seq, c.after) and m.id >= ${String(horizon)}
          union all
          select m.id, m.thread_id, m.seq, m.sender, m.recipient, m.body, m.created_at, m.attachments, m.edited_at, m.deleted_at, m.reactions, m.reply from messages m
          where c.thread_id <> 0 and m.recipient is null and m.thread_id = c.thread_id and m.seq > greatest(c.acked_seq, c.after)
            and m.id >= ${String(horizon)}
        ) s
        where not exists (select 1 from stream_acks a where a.member = c.member and a.thread_id = c.thread_id and a.seq = s.seq)
        order by s.seq
        limit c.lim
      ) x left join handout_counts h on h.member = c.member and h.thread_id = c.thread_id and h.seq = x.seq
    ),
    -- expired counts this read hands on: locked and re-read at their latest (the maintainer may have added to one
    -- since this statement's snapshot), taken away by the update below, so each is reported once (a second read
    -- waits on the lock, then finds 0); within this statement only the first read of the cursor reports it
    took as (
      select gc.member, gc.thread_id, gc.expired, (select min(c0.n) from c0 where c0.member = gc.member and c0.thread_id = gc.thread_id) as n
      from stream_cursors gc join (select distinct member, thread_id from c0 where expired > 0) e on gc.member = e.member and gc.thread_id = e.thread_id
      where gc.expired > 0
      for update of gc
    ),
    raised as (
      update stream_cursors gc
      set delivered_seq = greatest(gc.delivered_seq, coalesce(u.seq, gc.delivered_seq)), expired = gc.expired - coalesce(u.took, 0)
      from (
        select c.member, c.thread_id as stream, max(r.seq) as seq, max(tk.expired) as took
        from c left join r on r.n = c.n and r.stream = c.thread_id left join took tk on tk.member = c.member and tk.thread_id = c.thread_id
        group by c.member, c.thread_id
      ) u, relaxed
      where gc.member = u.member and gc.thread_id = u.stream and (gc.delivered_seq < u.seq or u.took > 0) and relaxed.s is not null
    ),
    counted as (
      insert into handout_counts (member, thread_id, seq, count)
      select member, stream, seq, max(coalesce(had, 1) + 1) from r where seq <= was group by member, stream, seq
      on conflict (member, thread_id, seq) do update set count = greatest(handout_counts.count, excluded.count)
    ),
    dropped as (
      delete from handout_counts h using (select distinct member, thread_id, acked_seq from c) d
      where h.member = d.member and h.thread_id = d.thread_id and h.seq <= d.acked_seq
    )
    select c.n::int as n, c.thread_id as stream, c.last_seq as last, c.acked_seq as acked,
           (select tk.expired from took tk where tk.member = c.member and tk.thread_id = c.thread_id and tk.n = c.n) as expired,
           (select array_agg(a.seq::text) from stream_acks a where a.member = c.member and a.thread_id = c.thread_id) as above,
           ${shownColumns(sql, "r")}, r.seq, r.was, r.had as count
    from c left join r on r.n = c.n and r.stream = c.thread_id ${shownJoins(sql, "r")}
    order by c.n, c.thread_id, r.seq`;
  const out: Backlog[] = reads.map(() => ({ entries: [], last: new Map(), cursors: new Map() }));
  for (const r of rows) {
    const b = out[r.n - 1]!;
    const stream = memberStream(reads[r.n - 1]!.member, BigInt(r.stream));
    b.last.set(stream, Number(r.last));
    b.cursors.set(stream, {
      acked: Number(r.acked),
      above: (r.above ?? []).map(Number),
      expired: Number(r.expired ?? 0),
    });
    if (r.seq === null) continue;
    b.entries.push({
      stream,
      seq: Number(r.seq),
      id: r.id.toString(),
      payload: JSON.stringify(toMessageAt(r, horizon)),
      deliveryCount: BigInt(r.seq) <= BigInt(r.was) ? (r.count ?? 1) + 1 : 1,
    });
  }
  return out;
}

/** Messages that `where` selects (`m` messages), in number order, as a publish carries them. */
async function published(
  sql: Sql,
  where: ReturnType<Sql>,
  limit: number | null,
  horizon: bigint,
): Promise<Published[]> {
  const rows = await sql<(MessageRow & { seq: string })[]>`
    select ${shownColumns(sql)}, m.seq
    from messages m ${shownJoins(sql)}
    where ${where} and m.seq is not null
    order by m.seq
    ${limit === null ? sql`` : sql`limit ${limit}`}`;
  return rows.map((r) => ({
    key: r.recipient === null ? groupStream(r.thread_id) : inboxStream(r.recipient),
    seq: Number(r.seq),
    id: r.id.toString(),
    payload: JSON.stringify(toMessageAt(r, horizon)),
  }));
}

/**
 * Messages numbered after `after` in `stream`, in order, at most `limit` (to fill a gap a node saw), none below
 * `horizon` (past retention).
 */
export function messagesAfter(
  sql: Sql,
  stream: StreamId,
  after: number,
  limit: number,
  horizon: bigint,
): Promise<Published[]> {
  const group = groupOf(stream);
  const where = sql`m.recipient ${group === undefined ? sql`= ${stream}` : sql`is null and m.thread_id = ${String(group)}`} and m.seq > ${after}`;
  return published(sql, sql`${where} and m.id >= ${String(horizon)}`, limit, horizon);
}

/**
 * The message `sender` stored with an Idempotency-Key from message id `since` on (the key's window), as a publish
 * carries it (below `horizon`, past retention: without its body, files or quote), or undefined.
 */
export async function sentWithKey(
  sql: Sql,
  sender: string,
  key: string,
  since: bigint,
  horizon: bigint,
): Promise<Published | undefined> {
  const [m] = await published(
    sql,
    sql`m.sender = ${sender} and m.idempotency_key = ${key} and m.id >= ${String(since)}`,
    1,
    horizon,
  );
  return m;
}

/** Of these message ids, the ones committed, as a publish carries them (a changed message as it is now). */
export function messagesById(sql: Sql, ids: string[], horizon: bigint): Promise<Published[]> {
  if (ids.length === 0) return Promise.resolve([]);
  return published(sql, sql`m.id = any(${ids}::bigint[])`, null, horizon);
}

/**
 * Members' sockets started (`seq` null) or stopped taking streams live. Started: delivered_seq becomes LIVE, so if
 * the node dies, every message of the stream counts as possibly delivered on the next read (an inbox that has had no
 * message yet gets its cursor here). Stopped cleanly: it becomes the last number the node published to the socket.
 */
export async function markLive(
  sql: Sql,
  items: { member: string; stream: StreamId; seq: number | null }[],
): Promise<void> {
  if (items.length === 0) return;
  await sql`
    with v as (
      select * from unnest(${items.map((i) => i.member)}::text[], ${items.map((i) => String(threadOf(i.stream)))}::bigint[],
        ${items.map((i) => (i.seq === null ? null : String(i.seq)))}::bigint[]) as v(member, thread_id, seq)
    ),
    made as (
      insert into stream_cursors (member, thread_id, acked_seq, joined_seq, delivered_seq)
      select v.member, 0, 0, 0, ${LIVE}::bigint from v where v.thread_id = 0 and v.seq is null
      on conflict do nothing
    )
    update stream_cursors gc set delivered_seq = case when v.seq is null then ${LIVE}::bigint
      when gc.delivered_seq = ${LIVE}::bigint then greatest(v.seq, gc.acked_seq) else greatest(gc.delivered_seq, v.seq) end
    from v where gc.member = v.member and gc.thread_id = v.thread_id`;
}

/**
 * Members join a group (inside the transaction that inserts them into thread_members): their cursors start at the
 * group's newest message, read under the group row's lock so no send numbers a message between. Already members keep
 * theirs. Returns the cursors made (StreamDelivery.membersChanged puts them into the remembered cursors).
 */
export async function joinGroup(
  tx: TransactionSql,
  thread: bigint,
  members: string[],
): Promise<{ member: string; acked: number }[]> {
  const rows = await tx<{ member: string; acked_seq: string }[]>`
    insert into stream_cursors (member, thread_id, acked_seq, joined_seq, delivered_seq)
    select m.p, g.id, g.last_seq, g.last_seq, g.last_seq
    from (select id, last_seq from groups where id = ${String(thread)} for update) g, unnest(${members}::text[]) as m(p)
    on conflict do nothing
    returning member, acked_seq`;
  return rows.map((r) => ({ member: r.member, acked: Number(r.acked_seq) }));
}

/** A member leaves a group (inside the transaction that removes them): their cursor, acks and counts go. */
export async function leaveGroup(tx: TransactionSql, thread: bigint, member: string): Promise<void> {
  await tx`delete from stream_cursors where member = ${member} and thread_id = ${String(thread)}`;
  await tx`delete from stream_acks where member = ${member} and thread_id = ${String(thread)}`;
  await tx`delete from handout_counts where member = ${member} and thread_id = ${String(thread)}`;
}

/** An account is deleted: its cursors, acks and counts in every stream go (its inbox row goes with the principal). */
export async function forgetMember(sql: Sql | TransactionSql, member: string): Promise<void> {
  await sql`delete from stream_cursors where member = ${member}`;
  await sql`delete from stream_acks where member = ${member}`;
  await sql`delete from handout_counts where member = ${member}`;
}
