// Threads: the caller's conversations (newest activity first, with unread counts), a thread's history (newest
// first), and the caller's read marker in a thread. Members only: anyone else gets 404, as for a thread that does
// not exist.
import { avatarPath } from "../schema/avatar-path.ts";
import { invalid, notFound } from "../runtime/errors.ts";
import { defineRoute, ok, type Route } from "../runtime/http/route.ts";
import { PREFIX, parseId } from "../runtime/ids.ts";
import { history } from "../runtime/messaging/message-view-store.ts";
import { DELETED_NAME, toMessageAt } from "../runtime/messaging/payload.ts";
import { markThreadRead } from "../runtime/messaging/read-markers.ts";
import { readsOf, unreadTotal } from "../runtime/messaging/read-markers-store.ts";
import { isMember, type ThreadRow, threadsOf } from "../runtime/messaging/threads-store.ts";
import { HistoryQuery, MarkReadRequest, ThreadsQuery } from "../schema/messages.ts";

/** A read marker as the API shows it: a message id, or null for 0 (nothing read). */
const markerId = (v: bigint | null) => (v === null || v === 0n ? null : PREFIX.message + v.toString());

/** The thread the path names; one that cannot be a thread id is 404, as for one the caller is not in. */
function pathThread(params: Record<string, string>): bigint {
  const id = parseId("thread", params["id"] ?? "");
  if (id === null) throw notFound("thread");
  return id;
}

function toThread(r: ThreadRow, horizon: bigint) {
  const last = r.last;
  return {
    id: PREFIX.thread + r.id.toString(),
    kind: r.kind,
    ...(r.kind === "direct"
      ? { peer: { id: r.peer_id!, display_name: r.peer_name ?? DELETED_NAME, avatar_url: avatarPath(r.peer_avatar) } }
      : {}),
    ...(r.kind === "group" ? { group: { id: PREFIX.group + r.id.toString(), name: r.group_name ?? "" } } : {}),
    last_message: last ? toMessageAt(last, horizon) : null,
    updated_at: (last?.created_at ?? r.created_at).toISOString(),
    unread_count: r.unread,
    muted: r.muted,
    read_through: markerId(r.read_through),
    ...(r.kind === "direct" ? { peer_read_through: markerId(r.peer_read_through) } : {}),
  };
}

const list = defineRoute({
  method: "GET",
  path: "/v1/threads",
  auth: "principal",
  scope: "read",
  query: ThreadsQuery,
  async handle({ query, principal, svc }) {
    let before: bigint | null = null;
    if (query.before !== undefined) {
      before = parseId("thread", query.before);
      if (before === null) throw invalid("before: must be a thread id", { field: "before" });
    }
    const horizon = svc.horizons.messages();
    const [rows, total] = await Promise.all([
      threadsOf(svc.sql, principal.id, before, query.limit, horizon),
      unreadTotal(svc.sql, principal.id, horizon),
    ]);
    return ok({
      threads: rows.slice(0, query.limit).map((r) => toThread(r, horizon)),
      has_more: rows.length > query.limit,
      unread_total: total,
    });
  },
});

const messages = defineRoute({
  method: "GET",
  path: "/v1/threads/:id/messages",
  auth: "principal",
  scope: "read",
  query: HistoryQuery,
  async handle({ params, query, principal, svc }) {
    const threadId = pathThread(params);
    if (!(await isMember(svc.sql, threadId, principal.id))) throw notFound("thread");
    let before: bigint | null = null;
    if (query.before !== undefined) {
      before = parseId("message", query.before);
      if (before === null) throw invalid("before: must be a message id", { field: "before" });
    }
    const horizon = svc.horizons.messages();
    const rows = await history(svc.sql, threadId, before, query.limit, horizon, principal.id);
    return ok({
      messages: rows.slice(0, query.limit).map((r) => toMessageAt(r, horizon)),
      has_more: rows.length > query.limit,
    });
  },
});

/** Marks a thread read through one of its messages (runtime/messaging/read-markers.ts). */
const read = defineRoute({
  method: "POST",
  path: "/v1/threads/:id/read",
  auth: "principal",
  scope: "read",
  body: MarkReadRequest,
  async handle({ params, body, principal, svc, log }) {
    const threadId = pathThread(params);
    const through = parseId("message", body.through);
    if (through === null) throw invalid("through: must be a message id", { field: "through" });
    return ok(await markThreadRead(svc, log, principal, threadId, through));
  },
});

/** How far the other members have read the thread (for a group's "Seen by"); the live changes are `read` events. */
const reads = defineRoute({
  method: "GET",
  path: "/v1/threads/:id/reads",
  auth: "principal",
  scope: "read",
  async handle({ params, principal, svc }) {
    const rows = await readsOf(svc.sql, pathThread(params), principal.id);
    if (!rows) throw notFound("thread");
    return ok({ reads: rows.map((r) => ({ member: r.member, read_through: PREFIX.message + r.through.toString() })) });
  },
});

export const threadRoutes: Route[] = [list, messages, read, reads];
