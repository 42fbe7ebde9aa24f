// An agent's webhook endpoint (issue 55): set (made or replaced), read, removed; its secret rotated; a signed ping
// sent now; its recent attempts. Agents only (a person's token answers 404, as on every agent-only route). Deliveries
// themselves: runtime/webhooks/; the statements: runtime/webhooks/webhooks-store.ts.
import { randomBytes } from "node:crypto";
import { invalid, notFound } from "../runtime/errors.ts";
import { created, defineRoute, noContent, ok, type Route } from "../runtime/http/route.ts";
import { checkOutboundUrl } from "../runtime/net/outbound-guard.ts";
import {
  deleteWebhook,
  getWebhook,
  listAttempts,
  putWebhook,
  rotateSecret,
  toWebhook,
} from "../runtime/webhooks/webhooks-store.ts";
import { PutWebhookRequest, WebhookDeliveriesQuery } from "../schema/webhooks.ts";

/** A signing secret in the Standard Webhooks form: "whsec_" and the base64 of 32 random bytes. */
const newSecret = () => `whsec_${randomBytes(32).toString("base64")}`;

const put = defineRoute({
  method: "PUT",
  path: "/v1/agents/me/webhook",
  auth: "agent",
  scope: "full",
  body: PutWebhookRequest,
  async handle({ principal, body, svc }) {
    const checked = checkOutboundUrl(body.url, svc.config.FLOCK_WEBHOOK_ALLOW_PRIVATE);
    if ("refused" in checked) throw invalid(`url ${checked.refused}`, { field: "url" });
    const { row, created: made } = await putWebhook(
      svc.sql,
      principal.id,
      { ...body, url: checked.url.toString() },
      newSecret(),
      new Date(svc.now()),
    );
    await svc.webhooks.announce(principal.id, "set");
    const webhook = toWebhook(row);
    return made ? created({ webhook, secret: row.secret }) : ok({ webhook });
  },
});

const show = defineRoute({
  method: "GET",
  path: "/v1/agents/me/webhook",
  auth: "agent",
  scope: "read",
  async handle({ principal, svc }) {
    const row = await getWebhook(svc.sql, principal.id);
    if (row === null) throw notFound("webhook");
    return ok({ webhook: toWebhook(row) });
  },
});

const remove = defineRoute({
  method: "DELETE",
  path: "/v1/agents/me/webhook",
  auth: "agent",
  scope: "full",
  async handle({ principal, svc }) {
    if (!(await deleteWebhook(svc.sql, principal.id))) throw notFound("webhook");
    await svc.webhooks.announce(principal.id, "removed");
    return noContent();
  },
});

const rotate = defineRoute({
  method: "POST",
  path: "/v1/agents/me/webhook/rotate",
  auth: "agent",
  scope: "full",
  async handle({ principal, svc }) {
    const until = new Date(svc.now() + svc.config.FLOCK_WEBHOOK_ROTATE_GRACE * 1000);
    const row = await rotateSecret(svc.sql, principal.id, newSecret(), until);
    if (row === null) throw notFound("webhook");
    await svc.webhooks.announce(principal.id, "set");
    return ok({ secret: row.secret, previous_valid_until: until.toISOString() });
  },
});

const test = defineRoute({
  method: "POST",
  path: "/v1/agents/me/webhook/test",
  auth: "agent",
  scope: "full",
  async handle({ principal, svc }) {
    const o = await svc.webhooks.ping(principal.id);
    if (o === null) throw notFound("webhook");
    return ok({ id: o.id, status: o.status, latency_ms: o.latencyMs, ok: o.ok, error: o.error });
  },
});

const deliveries = defineRoute({
  method: "GET",
  path: "/v1/agents/me/webhook/deliveries",
  auth: "agent",
  scope: "read",
  query: WebhookDeliveriesQuery,
  async handle({ principal, query, svc }) {
    const rows = await listAttempts(svc.sql, principal.id, query.limit);
    return ok({ deliveries: rows.map((r) => ({ ...r, at: r.at.toISOString() })) });
  },
});

export const webhookRoutes: Route[] = [put, show, remove, rotate, test, deliveries];
