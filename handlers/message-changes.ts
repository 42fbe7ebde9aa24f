// A sender edits or deletes a message (direct or group), and members react to one: each route parses its request and
// calls one use case (runtime/messaging/message-changes.ts).
import { invalid, notFound } from "../runtime/errors.ts";
import { defineRoute, jsonText, noContent, type Route } from "../runtime/http/route.ts";
import { parseId } from "../runtime/ids.ts";
import { deleteOwnMessage, editOwnMessage, reactToMessage } from "../runtime/messaging/message-changes.ts";
import { EditMessageRequest, Emoji, ReactRequest } from "../schema/messages.ts";

/** The message id of the path; one that cannot be one is 404, as for a message that does not exist. */
function messageId(params: Record<string, string>): bigint {
  const id = parseId("message", params["id"] ?? "");
  if (id === null) throw notFound("message");
  return id;
}

/** The sender changes a message's body, within 48 hours of sending it; it carries `edited_at` from then on. */
const edit = defineRoute({
  method: "PATCH",
  path: "/v1/messages/:id",
  auth: "principal",
  scope: "messages:write",
  body: EditMessageRequest,
  limit: "messages",
  async handle({ params, body, principal, svc, log }) {
    return jsonText(200, await editOwnMessage(svc, log, messageId(params), principal.id, body.body));
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
  scope: "messages:write",
  async handle({ params, principal, svc, log }) {
    await deleteOwnMessage(svc, log, messageId(params), principal.id);
    return noContent();
  },
});

/** A member reacts to a message with an emoji (again: no change); answers the message as it is now. */
const addReaction = defineRoute({
  method: "POST",
  path: "/v1/messages/:id/reactions",
  auth: "principal",
  scope: "messages:write",
  body: ReactRequest,
  limit: "messages",
  async handle({ params, body, principal, svc, log }) {
    return jsonText(200, await reactToMessage(svc, log, messageId(params), principal.id, body.emoji, true));
  },
});

/** A member takes back its reaction (one not there: no change); answers the message as it is now. */
const removeReaction = defineRoute({
  method: "DELETE",
  path: "/v1/messages/:id/reactions/:emoji",
  auth: "principal",
  scope: "messages:write",
  limit: "messages",
  async handle({ params, principal, svc, log }) {
    const id = messageId(params);
    const emoji = Emoji.safeParse(params["emoji"] ?? "");
    if (!emoji.success) throw invalid("emoji: must be one emoji or a :short_name:", { field: "emoji" });
    return jsonText(200, await reactToMessage(svc, log, id, principal.id, emoji.data, false));
  },
});

export const messageChangeRoutes: Route[] = [edit, remove, addReaction, removeReaction];
