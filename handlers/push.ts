// Web Push for people (docs/ARCHITECTURE.md, "Web Push"): the VAPID public key a browser subscribes with, and a
// person's push subscriptions (one per browser), added and removed. People only: an agent holds connections or polls
// (it gets the 403 every person-only route answers it). The endpoint must be a push service's public https:// URL
// unless FLOCK_PUSH_ALLOW_PRIVATE says otherwise (runtime/push/endpoint.ts, runtime/net/outbound-guard.ts).
import { conflict, invalid, notFound } from "../runtime/errors.ts";
import { created, defineRoute, noContent, ok, type Route } from "../runtime/http/route.ts";
import { endpointRefusal, keyRefusal } from "../runtime/push/endpoint.ts";
import { addSubscription, hasSubscriptions, removeSubscription } from "../runtime/push/push-store.ts";
import type { Services } from "../runtime/services.ts";
import { PushSubscriptionRequest, PushUnsubscribeRequest } from "../schema/push.ts";

/** 400 naming the endpoint when it may not be pushed to. */
function checkEndpoint(svc: Services, endpoint: string): void {
  const why = endpointRefusal(endpoint, svc.push.allowPrivate);
  if (why) throw invalid(`endpoint: ${why}`, { field: "endpoint", issues: [{ field: "endpoint", message: why }] });
}

const key = defineRoute({
  method: "GET",
  path: "/v1/push/key",
  auth: "none",
  handle({ svc }) {
    return ok({ public_key: svc.push.vapid.publicKey });
  },
});

const subscribe = defineRoute({
  method: "POST",
  path: "/v1/users/me/push-subscriptions",
  auth: "human",
  scope: "full",
  limit: "push_subscriptions",
  body: PushSubscriptionRequest,
  async handle({ body, principal, svc }) {
    checkEndpoint(svc, body.endpoint);
    const bad = keyRefusal(body.keys.p256dh);
    if (bad)
      throw invalid(`keys.p256dh: ${bad}`, { field: "keys.p256dh", issues: [{ field: "keys.p256dh", message: bad }] });
    const max = svc.push.maxSubscriptions;
    const out = await addSubscription(
      svc.sql,
      { principal: principal.id, endpoint: body.endpoint, p256dh: body.keys.p256dh, auth: body.keys.auth },
      max,
    );
    if (out.kind === "full")
      throw conflict(`you hold ${max} push subscriptions, the most one may hold; remove one first`);
    await svc.push.subscribers.changed(principal.id, true);
    // the browser was another person's: they may hold none now
    if (out.previous !== null)
      await svc.push.subscribers.changed(out.previous, await hasSubscriptions(svc.sql, out.previous));
    return created({ endpoint: body.endpoint, created_at: out.created_at.toISOString() });
  },
});

const unsubscribe = defineRoute({
  method: "DELETE",
  path: "/v1/users/me/push-subscriptions",
  auth: "human",
  scope: "full",
  limit: "push_subscriptions",
  body: PushUnsubscribeRequest,
  async handle({ body, principal, svc }) {
    if (!(await removeSubscription(svc.sql, principal.id, body.endpoint))) throw notFound("push subscription");
    await svc.push.subscribers.changed(principal.id, await hasSubscriptions(svc.sql, principal.id));
    return noContent();
  },
});

export const pushRoutes: Route[] = [key, subscribe, unsubscribe];
