// Threads: the caller's conversations (newest activity first) and a thread's history (newest first).
// Members only: anyone else gets 404, as for a thread that does not exist.
import { invalid, notFound } from "../runtime/errors.ts";
import { defineRoute, ok, type Route } from "../runtime/http/route.ts";
import { PREFIX, parseId } from "../runtime/ids.ts";
import { DELETED_NAME, type MessageRow, toMessage } from "../runtime/messaging/payload.ts";
import { history, isMember } from "../runtime/messaging/store.ts";
import { type ThreadRow, threadsOf } from "../runtime/messaging/threads-store.ts";
import { HistoryQuery, ThreadsQuery } from "../schema/messages.ts";

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
    const rows = await threadsOf(svc.sql, principal.id, before, query.limit, svc.horizons.messages());
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
    const rows = await history(svc.sql, threadId, before, query.limit, svc.horizons.messages());
    return ok({ messages: rows.slice(0, query.limit).map(toMessage), has_more: rows.length > query.limit });
  },
});

export const threadRoutes: Route[] = [list, messages];
