// The caller's threads as GET /v1/threads lists them: each with its peer (direct) or group name, and its newest
// message with that message's payment, ordered by activity (its newest message's id, or its own id before any).
import type { Sql } from "../db/client.ts";
import type { StoredAttachment } from "./payload.ts";
import { unreadCount } from "./read-markers-store.ts";
import type { Quote } from "../../schema/messages.ts";

/** A thread with its last message (`m_*` and `pay_*`, all null when it has none). */
export interface ThreadRow {
  id: bigint;
  kind: "direct" | "group";
  created_at: Date;
  group_name: string | null;
  peer_id: string | null;
  peer_name: string | null;
  peer_avatar: string | null;
  m_id: bigint | null;
  m_sender: string | null;
  m_sender_name: string | null;
  m_sender_avatar: string | null;
  m_recipient: string | null;
  m_body: string | null;
  m_created_at: Date | null;
  m_attachments: StoredAttachment[] | null;
  m_edited_at: Date | null;
  m_deleted_at: Date | null;
  m_reactions: Record<string, string[]> | null;
  m_reply: Quote | null;
  pay_tx: string | null;
  pay_network: string | null;
  pay_payer: string | null;
  pay_amount: string | null;
  pay_explorer: string | null;
  /** The caller's read marker (0: nothing read). */
  read_through: bigint;
  /** Messages from others above it (and the horizon), at most UNREAD_CAP. */
  unread: number;
  /** Direct threads: the peer's read marker, null when the peer does not send read receipts. */
  peer_read_through: bigint | null;
}

/**
 * A page of `me`'s threads, newest activity first, after the thread `before`; one row more than asked tells whether
 * more exist. A thread whose messages all went past `horizon` (retention) is listed with no last message.
 */
export function threadsOf(
  sql: Sql,
  me: string,
  before: bigint | null,
  limit: number,
  horizon: bigint,
): Promise<ThreadRow[]> {
  // a thread's activity: its newest message id, or its own id before any (ids are time ordered)
  return sql<ThreadRow[]>`
    with mine as (
      select t.id, t.kind, t.pair_key, t.created_at, me.read_through,
        coalesce((select m.id from messages m where m.thread_id = t.id and m.id >= ${String(horizon)} order by m.id desc limit 1), t.id)
          as activity
      from thread_members me join threads t on t.id = me.thread_id
      where me.principal = ${me}
    )
    select mine.id, mine.kind, mine.created_at, g.name as group_name,
      pp.peer_id, p.display_name as peer_name, p.avatar_key as peer_avatar,
      lm.id as m_id, lm.sender as m_sender, sp.display_name as m_sender_name, sp.avatar_key as m_sender_avatar, lm.recipient as m_recipient,
      lm.body as m_body, lm.created_at as m_created_at, lm.attachments as m_attachments,
      lm.edited_at as m_edited_at, lm.deleted_at as m_deleted_at, lm.reactions as m_reactions, lm.reply as m_reply,
      pay.tx_hash as pay_tx, pay.network as pay_network, pay.payer as pay_payer, pay.amount::text as pay_amount,
      pay.explorer_url as pay_explorer,
      mine.read_through,
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
    left join principals sp on sp.id = lm.sender
    left join payments pay on pay.message_id = lm.id
    ${before !== null ? sql`where mine.activity < (select activity from mine where id = ${String(before)})` : sql``}
    order by mine.activity desc
    limit ${limit + 1}`;
}
