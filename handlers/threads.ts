// Threads: the caller's conversations (newest activity first) and a thread's history (newest first).
// Members only: anyone else gets 404, as for a thread that does not exist.
import { invalid, notFound } from "../runtime/errors.ts";
import { defineRoute, ok, type Route } from "../runtime/http/route.ts";
import { PREFIX, parseId } from "../runtime/ids.ts";
import { DELETED_NAME, type MessageRow, type StoredAttachment, toMessage } from "../runtime/messaging/payload.ts";
import { history, isMember } from "../runtime/messaging/store.ts";
import type { Services } from "../runtime/services.ts";
import { HistoryQuery, ThreadsQuery } from "../schema/messages.ts";

interface ThreadRow {
  id: bigint;
  kind: "direct" | "group";
  created_at: Date;
  group_name: string | null;
  peer_id: string | null;
  peer_name: string | null;
  m_id: bigint | null;
  m_sender: string | null;
  m_sender_name: string | null;
  m_recipient: string | null;
  m_body: string | null;
  m_created_at: Date | null;
  m_attachments: StoredAttachment[] | null;
  pay_tx: string | null;
  pay_network: string | null;
  pay_payer: string | null;
  pay_amount: string | null;
  pay_explorer: string | null;
}

function threadsOf(svc: Services, me: string, before: bigint | null, limit: number): Promise<ThreadRow[]> {
  const sql = svc.sql;
  // a thread's activity: its newest message id, or its own id before any (ids are time ordered)
  return sql<ThreadRow[]>`
    with mine as (
      select t.id, t.kind, t.pair_key, t.created_at,
        coalesce((select m.id from messages m where m.thread_id = t.id order by m.id desc limit 1), t.id) as activity
      from thread_members me join threads t on t.id = me.thread_id
      where me.principal = ${me}
    )
    select mine.id, mine.kind, mine.created_at, g.name as group_name,
      pp.peer_id, p.display_name as peer_name,
      lm.id as m_id, lm.sender as m_sender, sp.display_name as m_sender_name, lm.recipient as m_recipient,
      lm.body as m_body, lm.created_at as m_created_at, lm.attachments as m_attachments,
      pay.tx_hash as pay_tx, pay.network as pay_network, pay.payer as pay_payer, pay.amount::text as pay_amount,
      pay.explorer_url as pay_explorer
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

function toThread(r: ThreadRow) {
  const last: MessageRow | null =
    r.m_id === null
      ? null
      : {
          id: r.m_id,
          thread_id: r.id,
          sender: r.m_sender!,
          sender_name: r.m_sender_name,
          recipient: r.m_recipient,
          body: r.m_body!,
          created_at: r.m_created_at!,
          attachments: r.m_attachments,
          pay_tx: r.pay_tx,
          pay_network: r.pay_network,
          pay_payer: r.pay_payer,
          pay_amount: r.pay_amount,
          pay_explorer: r.pay_explorer,
        };
  return {
    id: PREFIX.thread + r.id.toString(),
    kind: r.kind,
    ...(r.kind === "direct" ? { peer: { id: r.peer_id!, display_name: r.peer_name ?? DELETED_NAME } } : {}),
    ...(r.kind === "group" ? { group: { id: PREFIX.group + r.id.toString(), name: r.group_name ?? "" } } : {}),
    last_message: last ? toMessage(last) : null,
    updated_at: (last?.created_at ?? r.created_at).toISOString(),
  };
}

const list = defineRoute({
  method: "GET",
  path: "/v1/threads",
  auth: "principal",
  query: ThreadsQuery,
  async handle({ query, principal, svc }) {
    let before: bigint | null = null;
    if (query.before !== undefined) {
      before = parseId("thread", query.before);
      if (before === null) throw invalid("before: must be a thread id", { field: "before" });
    }
    const rows = await threadsOf(svc, principal.id, before, query.limit);
    return ok({ threads: rows.slice(0, query.limit).map(toThread), has_more: rows.length > query.limit });
  },
});

const messages = defineRoute({
  method: "GET",
  path: "/v1/threads/:id/messages",
  auth: "principal",
  query: HistoryQuery,
  async handle({ params, query, principal, svc }) {
    const threadId = parseId("thread", params["id"] ?? "");
    if (threadId === null || !(await isMember(svc.sql, threadId, principal.id))) throw notFound("thread");
    let before: bigint | null = null;
    if (query.before !== undefined) {
      before = parseId("message", query.before);
      if (before === null) throw invalid("before: must be a message id", { field: "before" });
    }
    const rows = await history(svc.sql, threadId, before, query.limit);
    return ok({ messages: rows.slice(0, query.limit).map(toMessage), has_more: rows.length > query.limit });
  },
});

export const threadRoutes: Route[] = [list, messages];
