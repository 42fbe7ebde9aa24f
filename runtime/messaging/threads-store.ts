// The caller's threads as GET /v1/threads lists them: each with its peer (direct) or group name, and its newest
// message as it is shown (message-view-store.ts), ordered by activity (its newest message's id, or its own id before
// any; a group message of someone the caller blocked is neither shown nor counted as activity); and whether a
// principal is one of a thread's members.
import type { Sql } from "../db/client.ts";
import { hiddenByBlock, shownColumns, shownJoins } from "./message-view-store.ts";
import type { MessageRow } from "./payload.ts";
import { unreadCount } from "./read-markers-store.ts";

/** A thread as the caller's list shows it, with its last message (null when it has none within retention). */
export interface ThreadRow {
  id: bigint;
  kind: "direct" | "group";
  created_at: Date;
  group_name: string | null;
  peer_id: string | null;
  peer_name: string | null;
  peer_avatar: string | null;
  last: MessageRow | null;
  /** The caller's read marker (0: nothing read). */
  read_through: bigint;
  /** Whether the caller muted the thread (POST /v1/threads/{id}/mute): it then counts no unread messages. */
  muted: boolean;
  /** Messages from others above it (and the horizon), at most UNREAD_CAP. */
  unread: number;
  /** Direct threads: the peer's read marker, null when the peer does not send read receipts. */
  peer_read_through: bigint | null;
}

/** A row of the statement: the thread's own columns (`t_` where a message's have the name), then its last message's. */
type Row = Omit<ThreadRow, "id" | "created_at" | "last"> & { t_id: bigint; t_created_at: Date } & {
  [K in keyof MessageRow]-?: MessageRow[K] | null;
};

/** Whether `principal` is a member of the thread. */
export async function isMember(sql: Sql, threadId: bigint, principal: string): Promise<boolean> {
  const rows =
    await sql`select 1 from thread_members where thread_id = ${String(threadId)} and principal = ${principal}`;
  return rows.length > 0;
}

/**
 * A page of `me`'s threads, newest activity first, after the thread `before`; one row more than asked tells whether
 * more exist. A thread whose messages all went past `horizon` (retention) is listed with no last message.
 */
export async function threadsOf(
  sql: Sql,
  me: string,
  before: bigint | null,
  limit: number,
  horizon: bigint,
): Promise<ThreadRow[]> {
  // a thread's activity: its newest message id, or its own id before any (ids are time ordered)
  const rows = await sql<Row[]>`
    with mine as (
      select t.id, t.kind, t.pair_key, t.created_at, me.read_through,
        coalesce((select m.id from messages m where m.thread_id = t.id and m.id >= ${String(horizon)}
                    and not ${hiddenByBlock(sql, me)} order by m.id desc limit 1), t.id)
          as activity,
        exists (select 1 from thread_mutes tmu where tmu.principal = ${me} and tmu.thread_id = t.id) as muted
      from thread_members me join threads t on t.id = me.thread_id
      where me.principal = ${me}
    )
    select mine.id as t_id, mine.kind, mine.created_at as t_created_at, g.name as group_name,
      pp.peer_id, p.display_name as peer_name, p.avatar_key as peer_avatar,
      ${shownColumns(sql, "lm")},
      mine.read_through, mine.muted,
      ${unreadCount(sql, sql`mine.id`, sql`mine.read_through`, me, horizon)} as unread,
      -- what the peer shows (migration 0021): not what it read while its receipts were off
      case when p.read_receipts then (select coalesce(pm.shown_through, pm.read_through) from thread_members pm where pm.thread_id = mine.id and pm.principal = pp.peer_id)
      end as peer_read_through
    from mine
    left join groups g on g.id = mine.id
    left join lateral (
      select case when split_part(mine.pair_key, ':', 1) = ${me} then split_part(mine.pair_key, ':', 2)
                  else split_part(mine.pair_key, ':', 1) end as peer_id
      where mine.kind = 'direct'
    ) pp on true
    left join principals p on p.id = pp.peer_id
    left join messages lm on lm.id = mine.activity
    ${shownJoins(sql, "lm")}
    ${before !== null ? sql`where mine.activity < (select activity from mine where id = ${String(before)})` : sql``}
    order by mine.activity desc
    limit ${limit + 1}`;
  return rows.map(
    ({
      t_id,
      kind,
      t_created_at,
      group_name,
      peer_id,
      peer_name,
      peer_avatar,
      read_through,
      muted,
      unread,
      peer_read_through,
      ...m
    }) => ({
      id: t_id,
      kind,
      created_at: t_created_at,
      group_name,
      peer_id,
      peer_name,
      peer_avatar,
      last: m.id === null ? null : (m as MessageRow),
      read_through,
      muted,
      unread,
      peer_read_through,
    }),
  );
}
