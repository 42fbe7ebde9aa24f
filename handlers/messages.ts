// Direct messages: send (one call to the send use case, runtime/messaging/send-message.ts, which takes a paid agent's
// x402 payment too), long-poll the inbox and groups, acknowledge. Edits, deletes and reactions:
// handlers/message-changes.ts.
import { notFound } from "../runtime/errors.ts";
import { defineRoute, jsonText, noContent, type Route } from "../runtime/http/route.ts";
import { parseId } from "../runtime/ids.ts";
import { pendingJson } from "../runtime/messaging/payload.ts";
import { sendMessage } from "../runtime/messaging/send-message.ts";
import { AckQuery, PendingQuery, SendMessageRequest } from "../schema/messages.ts";

const send = defineRoute({
  method: "POST",
  path: "/v1/messages",
  idempotent: "folded",
  traced: true,
  auth: "principal",
  scope: "messages:write",
  body: SendMessageRequest,
  limit: "messages",
  async handle(ctx) {
    const { to, thread_id, body, attachments, reply_to } = ctx.body;
    return sendMessage(ctx, { to, threadId: thread_id, body, attachments, replyTo: reply_to });
  },
});

const pending = defineRoute({
  method: "GET",
  path: "/v1/messages/pending",
  auth: "principal",
  scope: "read",
  noHead: true, // a fetch counts a delivery: HEAD must not
  query: PendingQuery,
  async handle({ query, principal, svc, onAborted, headers }) {
    // the principal is online while it polls (runtime/messaging/poll-presence.ts)
    const ended = svc.pollPresence.poll(principal);
    const read = await svc.hub
      .poll(principal.id, query.limit, query.timeout * 1000, onAborted ?? (() => {}))
      .finally(ended);
    // a poll its principal's suspension ended (or any change of its tokens) answers as the token does now: 403
    if (read.entries.length === 0) await svc.auth.authenticate(headers["authorization"]);
    return jsonText(200, pendingJson(read.entries, read.expired));
  },
});

const ack = defineRoute({
  method: "POST",
  path: "/v1/messages/:id/ack",
  auth: "principal",
  scope: "read",
  query: AckQuery,
  async handle({ params, query, principal, svc }) {
    const raw = parseId("message", params["id"] ?? "");
    if (raw === null || !(await svc.hub.ack(principal.id, raw, query.through))) throw notFound("message");
    return noContent();
  },
});

export const messageRoutes: Route[] = [send, pending, ack];
