// Direct messages: send (runtime/messaging/send.ts), long-poll the inbox and groups, acknowledge; a sender edits or
// deletes a message (direct or group). A send to a paid agent goes through x402 (runtime/payments/paid-send.ts).
import { ApiError, conflict, invalid, notFound } from "../runtime/errors.ts";
import { defineRoute, jsonText, noContent, replayed, type Route } from "../runtime/http/route.ts";
import { parseId } from "../runtime/ids.ts";
import { resolveAttachments } from "../runtime/messaging/attachments.ts";
import { pendingJson } from "../runtime/messaging/payload.ts";
import { sendDirect, sentBefore } from "../runtime/messaging/send.ts";
import { isMember } from "../runtime/messaging/store.ts";
import { paidSend } from "../runtime/payments/paid-send.ts";
import { type ChangeOutcome, deleteMessage, EDIT_WINDOW_MS, editMessage } from "../runtime/messaging/edits-store.ts";
import { messagesById } from "../runtime/messaging/stream-store.ts";
import type { Services } from "../runtime/services.ts";
import type { Logger } from "../runtime/log.ts";
import { AckQuery, EditMessageRequest, PendingQuery, SendMessageRequest } from "../schema/messages.ts";

const send = defineRoute({
  method: "POST",
  path: "/v1/messages",
  idempotent: true,
  auth: "principal",
  body: SendMessageRequest,
  limit: "messages",
  async handle(ctx) {
    const { body, principal, svc } = ctx;
    if (body.to === principal.id) throw invalid("to: you cannot send a message to yourself", { field: "to" });
    const before = await sentBefore(svc, principal, ctx.idempotencyKey);
    if (before !== null) return replayed(jsonText(201, before));
    const hub = svc.hub;
    const threadId = await hub.directThread(principal.id, body.to);
    if (threadId === null) throw notFound("recipient");
    if (body.thread_id !== undefined) {
      const given = parseId("thread", body.thread_id);
      if (given !== threadId) {
        if (given === null || !(await isMember(svc.sql, given, principal.id))) throw notFound("thread");
        throw invalid("thread_id: not your direct thread with `to` (send to a group with POST /v1/groups/{id}/messages)", {
          field: "thread_id",
        });
      }
    }
    // checked before any payment: a send refused for its files is never charged
    const attachments = await resolveAttachments(svc.sql, principal.id, body.attachments);
    const terms = await svc.paidAgents.terms(body.to);
    const msg = { threadId, body: body.body, attachments, idempotencyKey: ctx.idempotencyKey };
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

/**
 * An edit's or delete's outcome as the API answers it; when done, the message as it is now (its JSON), told to the
 * thread's members live. A failure to tell them (Redis out) is logged: the change is committed, and history and
 * redelivery read it from Postgres.
 */
async function applied(svc: Services, log: Logger, id: bigint, out: ChangeOutcome, verb: "edit" | "delete"): Promise<string | null> {
  switch (out.kind) {
    case "not_found":
      throw notFound("message");
    case "not_sender":
      throw new ApiError("forbidden", `only the sender may ${verb} a message`);
    case "deleted":
      throw conflict("the message was deleted");
    case "too_old":
      throw new ApiError("forbidden", `a message may be edited for ${EDIT_WINDOW_MS / 3_600_000} hours after it was sent`);
    case "done": {
      if (!out.changed && verb === "delete") return null;
      const [m] = await messagesById(svc.sql, [id.toString()]);
      if (!m) throw notFound("message"); // gone past retention meanwhile
      if (out.changed) await svc.hub.streams.changed(m, out.members).catch((err: unknown) => log.warn({ err }, `message ${verb} not told to connections`));
      return m.payload;
    }
  }
}

/** The sender changes a message's body, within 48 hours of sending it; it carries `edited_at` from then on. */
const edit = defineRoute({
  method: "PATCH",
  path: "/v1/messages/:id",
  auth: "principal",
  body: EditMessageRequest,
  limit: "messages",
  async handle({ params, body, principal, svc, log }) {
    const id = parseId("message", params["id"] ?? "");
    if (id === null) throw notFound("message");
    const out = await editMessage(svc.sql, id, principal.id, body.body, new Date(svc.now()), svc.horizons.messages());
    const payload = await applied(svc, log, id, out, "edit");
    return jsonText(200, payload!);
  },
});

/**
 * The sender deletes a message: a tombstone stays in history (no body, no files), and the files it carried are no
 * longer shared through it. Deleting it again is 204 too.
 */
const remove = defineRoute({
  method: "DELETE",
  path: "/v1/messages/:id",
  auth: "principal",
  async handle({ params, principal, svc, log }) {
    const id = parseId("message", params["id"] ?? "");
    if (id === null) throw notFound("message");
    const out = await deleteMessage(svc.sql, id, principal.id, new Date(svc.now()), svc.horizons.messages());
    await applied(svc, log, id, out, "delete");
    return noContent();
  },
});

export const messageRoutes: Route[] = [send, pending, ack, edit, remove];
