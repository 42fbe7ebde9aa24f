// Postgres side of retention (docs/ARCHITECTURE.md, "Retention"): the partitions of `messages` (ranges of id, that is
// of time: runtime/ids.ts), creating them ahead, dropping those past the horizon, and moving the stream cursors over
// the messages that went. Called only by the maintainer, each in a short transaction of its own
// (runtime/retention/maintainer.ts).
import type { Sql } from "../db/client.ts";
import { idTime } from "../ids.ts";

/** A range partition of `messages`: ids from `lo` (inclusive) to `hi` (exclusive); lo null for MINVALUE. */
export interface Partition {
  name: string;
  lo: bigint | null;
  hi: bigint;
}

/** The range partitions of `messages` (not the default one), by their bounds. */
export async function partitions(tx: Sql): Promise<Partition[]> {
  const rows = await tx<{ name: string; bound: string }[]>`
    select c.relname as name, pg_get_expr(c.relpartbound, c.oid) as bound
    from pg_inherits i join pg_class c on c.oid = i.inhrelid
    where i.inhparent = 'messages'::regclass`;
  const out: Partition[] = [];
  for (const r of rows) {
    const m = /FROM \((?:'?(-?\d+)'?|MINVALUE)\) TO \('?(-?\d+)'?\)/.exec(r.bound);
    if (!m) continue; // DEFAULT
    out.push({ name: r.name, lo: m[1] === undefined ? null : BigInt(m[1]), hi: BigInt(m[2]!) });
  }
  return out.sort((a, b) => (a.hi < b.hi ? -1 : 1));
}

/** `messages_20261127t1015`: a partition named by the UTC minute its range starts. */
export function partitionName(lo: bigint): string {
  const d = new Date(idTime(lo)).toISOString(); // 2026-11-27T10:15:00.000Z
  return `messages_${d.slice(0, 4)}${d.slice(5, 7)}${d.slice(8, 10)}t${d.slice(11, 13)}${d.slice(14, 16)}`;
}

/**
 * A partition for ids lo..hi. Rows the default partition caught in that range (a clock ahead) move into it: the
 * default partition is detached meanwhile, so the new one can be attached without them.
 */
export async function createPartition(tx: Sql, lo: bigint, hi: bigint): Promise<string> {
  const name = partitionName(lo);
  const [stray] = await tx<{ n: number }[]>`
    select count(*)::int as n from messages_default where id >= ${String(lo)} and id < ${String(hi)}`;
  if (!stray || stray.n === 0) {
    await tx.unsafe(`create table "${name}" partition of messages for values from (${lo}) to (${hi})`);
    return name;
  }
  await tx.unsafe("alter table messages detach partition messages_default");
  await tx.unsafe(`create table "${name}" partition of messages for values from (${lo}) to (${hi})`);
  await tx`insert into messages select * from messages_default where id >= ${String(lo)} and id < ${String(hi)}`;
  await tx`delete from messages_default where id >= ${String(lo)} and id < ${String(hi)}`;
  await tx.unsafe("alter table messages attach partition messages_default default");
  return name;
}

/** Drop a partition whose every id is past the horizon: its messages are gone for everyone, in one statement. */
export async function dropPartition(tx: Sql, name: string): Promise<void> {
  await tx.unsafe(`drop table "${name}"`);
}

/** Rows the default partition holds below the horizon (from a clock that ran behind): deleted, a rare few. */
export async function dropDefaultBelow(tx: Sql, horizon: bigint): Promise<number> {
  const rows = await tx`delete from messages_default where id < ${String(horizon)}`;
  return rows.count;
}

/** The horizon the cursors were last moved to (0: never). */
export async function markOf(tx: Sql, name: string): Promise<bigint> {
  const [row] = await tx<{ horizon: string }[]>`select horizon from retention_marks where name = ${name}`;
  return row ? BigInt(row.horizon) : 0n;
}

/**
 * Messages with ids from `from` up to `horizon` went past it: the oldest `slice` of them at most (up to `to`, returned)
 * are taken here. Every cursor behind one of them moves past it, as a cumulative ack would (flock_stream_ack, which
 * also folds the acks above it), and counts how many it had not acknowledged in `expired` (handed to the member's
 * next read). A cursor never moves past a number still kept (ids are made before a number is taken, so a kept message
 * may have a smaller number than one that went). Records `to` as the new mark.
 */
export async function expireCursors(
  tx: Sql,
  from: bigint,
  horizon: bigint,
  slice: number,
): Promise<{ to: bigint; cursors: number }> {
  const [cut] = await tx<{ id: string | null }[]>`
    select id from messages where id >= ${String(from)} and id < ${String(horizon)} order by id offset ${slice} limit 1`;
  const to = cut?.id ? BigInt(cut.id) : horizon;
  const behind = await tx<{ member: string; thread_id: string; upto: string; lost: string }[]>`
    with gone as (
      select case when recipient is null then thread_id else 0 end as thread, recipient, max(seq) as upto
      from messages where id >= ${String(from)} and id < ${String(to)} and seq is not null
      group by 1, 2
    ),
    cursors as (
      select gc.member, gc.thread_id, gc.acked_seq, g.upto from gone g
      join stream_cursors gc on gc.member = g.recipient and gc.thread_id = 0
      where g.thread = 0 and gc.acked_seq < g.upto
      union all
      select gc.member, gc.thread_id, gc.acked_seq, g.upto from gone g
      join stream_cursors gc on gc.thread_id = g.thread
      where g.thread <> 0 and gc.acked_seq < g.upto
    ),
    capped as (
      -- the first number still kept in the cursor's stream, one indexed lookup per cursor (an inbox's by recipient,
      -- a group's by thread: an OR of the two read every kept message for each cursor, seconds a slice at 500/s)
      select c.member, c.thread_id, c.acked_seq, least(c.upto, coalesce(case when c.thread_id = 0 then (
          select min(m.seq) - 1 from messages m
          where m.recipient = c.member and m.seq is not null and m.id >= ${String(horizon)}
        ) else (
          select min(m.seq) - 1 from messages m
          where m.thread_id = c.thread_id and m.recipient is null and m.seq is not null and m.id >= ${String(horizon)}
        ) end, c.upto)) as upto
      from cursors c
    )
    select member, thread_id, upto,
           upto - acked_seq - (select count(*) from stream_acks a
             where a.member = capped.member and a.thread_id = capped.thread_id and a.seq > capped.acked_seq and a.seq <= capped.upto) as lost
    from capped where upto > acked_seq`;
  if (behind.length > 0) {
    const members = behind.map((b) => b.member);
    const threads = behind.map((b) => String(b.thread_id));
    await tx`
      update stream_cursors gc set expired = gc.expired + v.lost
      from unnest(${members}::text[], ${threads}::bigint[], ${behind.map((b) => String(b.lost))}::bigint[]) as v(member, thread_id, lost)
      where gc.member = v.member and gc.thread_id = v.thread_id`;
    await tx`
      select flock_stream_ack(v.member, v.thread_id, v.upto, true)
      from unnest(${members}::text[], ${threads}::bigint[], ${behind.map((b) => String(b.upto))}::bigint[]) as v(member, thread_id, upto)`;
  }
  await tx`
    insert into retention_marks (name, horizon) values ('messages', ${String(to)})
    on conflict (name) do update set horizon = excluded.horizon`;
  return { to, cursors: behind.length };
}
