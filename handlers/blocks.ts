// Blocks and mutes: block, unblock and list blocks; mute, unmute and list mutes; mute and unmute a thread. The rules
// and the cache every node keeps are runtime/social/blocks.ts, the statements runtime/social/blocks-store.ts.
import { notFound } from "../runtime/errors.ts";
import { defineRoute, noContent, ok, type Route } from "../runtime/http/route.ts";
import { parseId } from "../runtime/ids.ts";
import {
  type RelationEntry,
  deleteThreadMute,
  insertThreadMute,
  relationPage,
} from "../runtime/social/blocks-store.ts";
import { block, mute, unblock, unmute } from "../runtime/social/blocks.ts";
import { conflict } from "../runtime/errors.ts";
import type { Logger } from "../runtime/log.ts";
import type { Services } from "../runtime/services.ts";
import { MAX_MUTES, RelationsQuery } from "../schema/blocks.ts";
import { principalId } from "../schema/common.ts";

/** The principal the path names; one that cannot be a principal id is 404, as for one that is no one's. */
function pathPrincipal(params: Record<string, string>): string {
  const id = params["principal"] ?? "";
  if (!principalId.safeParse(id).success) throw notFound("principal");
  return id;
}

function pathThread(params: Record<string, string>): bigint {
  const id = parseId("thread", params["id"] ?? "");
  if (id === null) throw notFound("thread");
  return id;
}

const entry = (e: RelationEntry) => ({ principal: e.principal, created_at: e.created_at.toISOString() });

type Change = (svc: Services, log: Logger, me: string, other: string) => Promise<void>;

/**
 * The three routes of one kind of relation, blocks or mutes: make one (twice is fine: 204 both times; yourself 400;
 * an id that is no one's 404), undo one, and list them.
 */
function relationRoutes(kind: "blocks" | "mutes", make: Change, undo: Change): Route[] {
  const path = `/v1/${kind}/:principal`;
  const change = (method: "POST" | "DELETE", run: Change) =>
    defineRoute({
      method,
      path,
      auth: "principal",
      scope: "social:write",
      limit: "relations",
      async handle({ params, principal, svc, log }) {
        await run(svc, log, principal.id, pathPrincipal(params));
        return noContent();
      },
    });
  const list = defineRoute({
    method: "GET",
    path: `/v1/${kind}`,
    auth: "principal",
    scope: "read",
    query: RelationsQuery,
    async handle({ query, principal, svc }) {
      const rows = await relationPage(svc.sql, kind, principal.id, query.before, query.limit);
      return ok({ [kind]: rows.slice(0, query.limit).map(entry), has_more: rows.length > query.limit });
    },
  });
  return [change("POST", make), change("DELETE", undo), list];
}

/** A member mutes one of its threads (idempotent): it raises no unread count for them. 404 for a non-member. */
const muteThread = defineRoute({
  method: "POST",
  path: "/v1/threads/:id/mute",
  auth: "principal",
  scope: "social:write",
  limit: "relations",
  async handle({ params, principal, svc }) {
    const out = await insertThreadMute(svc.sql, principal.id, pathThread(params), MAX_MUTES);
    if (out === "no_thread") throw notFound("thread");
    if (out === "full") throw conflict(`you hold ${MAX_MUTES} muted threads, the most one may hold; unmute one first`);
    return noContent();
  },
});

const unmuteThread = defineRoute({
  method: "DELETE",
  path: "/v1/threads/:id/mute",
  auth: "principal",
  scope: "social:write",
  limit: "relations",
  async handle({ params, principal, svc }) {
    if (!(await deleteThreadMute(svc.sql, principal.id, pathThread(params)))) throw notFound("thread");
    return noContent();
  },
});

export const blockRoutes: Route[] = [
  ...relationRoutes("blocks", block, unblock),
  ...relationRoutes("mutes", mute, unmute),
  muteThread,
  unmuteThread,
];
