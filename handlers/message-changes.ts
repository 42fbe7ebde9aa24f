// A sender edits or deletes a message (direct or group), and members react to one. Each change is one statement
// (runtime/messaging/edits-store.ts, reactions-store.ts); when it changed the message, every copy of its payload
// outside Postgres is made current and the members' sockets hear it (runtime/messaging/streams.ts `changed`).
import { ApiError, conflict, invalid, notFound } from "../runtime/errors.ts";
import { defineRoute, jsonText, noContent, type Route } from "../runtime/http/route.ts";
import { parseId } from "../runtime/ids.ts";
import type { Logger } from "../runtime/log.ts";
import { type ChangeOutcome, deleteMessage, EDIT_WINDOW_MS, editMessage } from "../runtime/messaging/edits-store.ts";
import { react, type ReactOutcome } from "../runtime/messaging/reactions-store.ts";
import { messagesById } from "../runtime/messaging/stream-store.ts";
import type { Services } from "../runtime/services.ts";
import { EditMessageRequest, Emoji, MAX_REACTIONS, ReactRequest } from "../schema/messages.ts";

/**
 * An edit's or delete's outcome as the API answers it; when done, the message as it is now (its JSON), told to the
 * thread's members live. A failure to tell them (Redis out) is logged: the change is committed, and history and
 * redelivery read it from Postgres.
 */
async function applied(
  svc: Services,
  log: Logger,
  id: bigint,
  out: ChangeOutcome | ReactOutcome,
  verb: "edit" | "delete" | "react",
): Promise<string | null> {
  switch (out.kind) {
    case "not_found":
      throw notFound("message");
    case "not_sender":
      throw new ApiError("forbidden", `only the sender may ${verb} a message`);
    case "deleted":
      throw conflict("the message was deleted");
    case "too_old":
      throw new ApiError(
        "forbidden",
        `a message may be edited for ${EDIT_WINDOW_MS / 3_600_000} hours after it was sent`,
      );
    case "too_many":
      throw conflict(`a message holds at most ${MAX_REACTIONS} different reactions`);
    case "done": {
      if (!out.changed && verb === "delete") return null;
      // a reaction already so (or not there) still answers the message as it is
      const [m] = await messagesById(svc.sql, [id.toString()], svc.horizons.messages());
      if (!m) throw notFound("message"); // gone past retention meanwhile
      if (out.changed)
        await svc.hub.streams
          .changed(m, out.members)
          .catch((err: unknown) => log.warn({ err }, `message ${verb} not told to connections`));
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

/** A member reacts to a message with an emoji (again: no change); answers the message as it is now. */
const addReaction = defineRoute({
  method: "POST",
  path: "/v1/messages/:id/reactions",
  auth: "principal",
  body: ReactRequest,
  limit: "messages",
  async handle({ params, body, principal, svc, log }) {
    const id = parseId("message", params["id"] ?? "");
    if (id === null) throw notFound("message");
    const out = await react(svc.sql, id, principal.id, body.emoji, true, svc.horizons.messages());
    return jsonText(200, (await applied(svc, log, id, out, "react"))!);
  },
});

/** A member takes back its reaction (one not there: no change); answers the message as it is now. */
const removeReaction = defineRoute({
  method: "DELETE",
  path: "/v1/messages/:id/reactions/:emoji",
  auth: "principal",
  limit: "messages",
  async handle({ params, principal, svc, log }) {
    const id = parseId("message", params["id"] ?? "");
    if (id === null) throw notFound("message");
    const emoji = Emoji.safeParse(params["emoji"] ?? "");
    if (!emoji.success) throw invalid("emoji: must be one emoji or a :short_name:", { field: "emoji" });
    const out = await react(svc.sql, id, principal.id, emoji.data, false, svc.horizons.messages());
    return jsonText(200, (await applied(svc, log, id, out, "react"))!);
  },
});

export const messageChangeRoutes: Route[] = [edit, remove, addReaction, removeReaction];
