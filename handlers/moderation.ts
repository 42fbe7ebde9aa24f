// The moderation API (issue 53): the report queue, closing a report, suspending and lifting a suspension, removing
// content, and the audit log. Only moderators (FLOCK_MODERATORS, or granted by an admin on the server) see these
// routes: for anyone else each one answers 404, as a route that does not exist. Use cases:
// runtime/moderation/moderation.ts.

import { defineRoute, noContent, ok, type Route } from "../runtime/http/route.ts";
import { parseId } from "../runtime/ids.ts";
import {
  closeOne,
  readAudit,
  removeContent,
  reportQueue,
  requireModerator,
  suspendMany,
  unsuspendMany,
} from "../runtime/moderation/moderation.ts";
import {
  AuditQuery,
  CloseReportRequest,
  QueueQuery,
  RemoveContentRequest,
  SuspendRequest,
  UnsuspendRequest,
} from "../schema/moderation.ts";

const queue = defineRoute({
  method: "GET",
  path: "/v1/moderation/reports",
  auth: "principal",
  admit: requireModerator,
  scope: "admin",
  query: QueueQuery,
  async handle({ query, svc }) {
    const after = query.after === undefined ? 0n : (parseId("report", query.after) ?? 0n);
    return ok(await reportQueue(svc, after, query.limit));
  },
});

const close = defineRoute({
  method: "POST",
  path: "/v1/moderation/reports/:id",
  auth: "principal",
  admit: requireModerator,
  scope: "admin",
  body: CloseReportRequest,
  async handle({ params, body, principal, svc }) {
    return ok({ report: await closeOne(svc, principal, params["id"] ?? "", body.status, body.reason) });
  },
});

const suspendRoute = defineRoute({
  method: "POST",
  path: "/v1/moderation/suspensions",
  auth: "principal",
  admit: requireModerator,
  scope: "admin",
  body: SuspendRequest,
  async handle({ body, principal, svc, log }) {
    return ok(await suspendMany(svc, log, principal, body.principals, body.reason, body.remove_content));
  },
});

const unsuspendRoute = defineRoute({
  method: "POST",
  path: "/v1/moderation/suspensions/lift",
  auth: "principal",
  admit: requireModerator,
  scope: "admin",
  body: UnsuspendRequest,
  async handle({ body, principal, svc }) {
    return ok(await unsuspendMany(svc, principal, body.principals, body.reason));
  },
});

const remove = defineRoute({
  method: "POST",
  path: "/v1/moderation/removals",
  auth: "principal",
  admit: requireModerator,
  scope: "admin",
  body: RemoveContentRequest,
  async handle({ body, principal, svc, log }) {
    await removeContent(svc, log, principal, body.target, body.id, body.reason);
    return noContent();
  },
});

const auditLog = defineRoute({
  method: "GET",
  path: "/v1/moderation/audit",
  auth: "principal",
  admit: requireModerator,
  scope: "admin",
  query: AuditQuery,
  async handle({ query, svc }) {
    const before = query.before === undefined ? 0n : (parseId("audit", query.before) ?? 0n);
    return ok(await readAudit(svc, before, query.limit));
  },
});

export const moderationRoutes: Route[] = [queue, close, suspendRoute, unsuspendRoute, remove, auditLog];
