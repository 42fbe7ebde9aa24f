// Direct messages: send (runtime/messaging/send.ts), long-poll the inbox and groups, acknowledge. A send to a paid
// agent goes through x402 (runtime/payments/paid-send.ts). Edits, deletes and reactions: handlers/message-changes.ts.
import { invalid, notFound } from "../runtime/errors.ts";
import { defineRoute, jsonText, noContent, replayed, type Route } from "../runtime/http/route.ts";
import { parseId } from "../runtime/ids.ts";
import { resolveAttachments } from "../runtime/messaging/attachments.ts";
import { pendingJson } from "../runtime/messaging/payload.ts";
import { sendDirect, sentBefore } from "../runtime/messaging/send.ts";
import { isMember, pairKey } from "../runtime/messaging/store.ts";
import { replyQuote } from "../runtime/messaging/replies.ts";
import { demandPayment, paidSend } from "../runtime/payments/paid-send.ts";
import { AckQuery, PendingQuery, SendMessageRequest } from "../schema/messages.ts";

const send = defineRoute({
  method: "POST",
  path: "/v1/messages",
  idempotent: true,
  traced: true,
  auth: "principal",
  body: SendMessageRequest,
  limit: "messages",
  async handle(ctx) {
    const { body, principal, svc } = ctx;
    if (body.to === principal.id) throw invalid("to: you cannot send a message to yourself", { field: "to" });
    const before = await sentBefore(svc, principal, ctx.idempotencyKey);
    if (before !== null) return replayed(jsonText(201, before));
    const hub = svc.hub;
    // checked before any payment: a send refused for its files is never charged (nor asked to pay)
    const attachments = await resolveAttachments(svc.sql, principal.id, body.attachments);
    // a paid agent's 402 comes before the pair's thread is made: an unpaid attempt leaves no empty conversation
    const terms = await svc.paidAgents.terms(body.to);
    if (terms) await demandPayment(ctx, terms, body.to);
    // the quote before the thread: a refused reply leaves no conversation behind
    const reply = await replyQuote(svc, { pair: pairKey(principal.id, body.to) }, body.reply_to, principal.id);
    const threadId = await hub.directThread(principal.id, body.to);
    if (threadId === null) throw notFound("recipient");
    if (body.thread_id !== undefined) {
      const given = parseId("thread", body.thread_id);
      if (given !== threadId) {
        if (given === null || !(await isMember(svc.sql, given, principal.id))) throw notFound("thread");
        throw invalid(
          "thread_id: not your direct thread with `to` (send to a group with POST /v1/groups/{id}/messages)",
          {
            field: "thread_id",
          },
        );
      }
    }
    const msg = { threadId, body: body.body, attachments, idempotencyKey: ctx.idempotencyKey, reply };
    if (terms) return paidSend(ctx, terms, body.to, msg);
    const payload = await sendDirect(svc, principal, body.to, msg);
    return jsonText(201, payload);
  },
});

const pending = defineRoute({
  method: "GET",
  path: "/v1/messages/pending",
  auth: "principal",
  noHead: true, // a fetch counts a delivery: HEAD must not
  query: PendingQuery,
  async handle({ query, principal, svc, onAborted }) {
    const read = await svc.hub.poll(principal.id, query.limit, query.timeout * 1000, onAborted ?? (() => {}));
    return jsonText(200, pendingJson(read.entries, read.expired));
  },
});

const ack = defineRoute({
  method: "POST",
  path: "/v1/messages/:id/ack",
  auth: "principal",
  query: AckQuery,
  async handle({ params, query, principal, svc }) {
    const raw = parseId("message", params["id"] ?? "");
    if (raw === null || !(await svc.hub.ack(principal.id, raw, query.through))) throw notFound("message");
    return noContent();
  },
});

export const messageRoutes: Route[] = [send, pending, ack];
