// Changes to a message after it was sent (handlers/message-changes.ts calls one per request): its sender edits or
// deletes it, a member reacts to it or takes the reaction back. Each change is one statement (edits-store.ts,
// reactions-store.ts) that checks what the caller may do; when it changed the message, every copy of its payload
// outside Postgres is made current and the members' sockets hear it (StreamDelivery.changed).
import { ApiError, conflict, notFound } from "../errors.ts";
import type { Logger } from "../log.ts";
import type { Services } from "../services.ts";
import { MAX_REACTIONS } from "../../schema/messages.ts";
import { type ChangeOutcome, deleteMessage, EDIT_WINDOW_MS, editMessage } from "./edits-store.ts";
import { react, type ReactOutcome } from "./reactions-store.ts";
import { messagesById } from "./stream-store.ts";

/** The sender `me` changes the body of message `id`, within EDIT_WINDOW_MS of sending it; the message as it is now. */
export async function editOwnMessage(
  svc: Services,
  log: Logger,
  id: bigint,
  me: string,
  body: string,
): Promise<string> {
  const out = await editMessage(svc.sql, id, me, body, new Date(svc.now()), svc.horizons.messages());
  return (await applied(svc, log, id, out, "edit"))!;
}

/** The sender `me` deletes message `id` (a tombstone stays in history); deleting it again changes nothing. */
export async function deleteOwnMessage(svc: Services, log: Logger, id: bigint, me: string): Promise<void> {
  const out = await deleteMessage(svc.sql, id, me, new Date(svc.now()), svc.horizons.messages());
  await applied(svc, log, id, out, "delete");
}

/** The member `me` reacts (`on`) with `emoji` to message `id`, or takes it back; the message as it is now. */
export async function reactToMessage(
  svc: Services,
  log: Logger,
  id: bigint,
  me: string,
  emoji: string,
  on: boolean,
): Promise<string> {
  const out = await react(svc.sql, id, me, emoji, on, svc.horizons.messages());
  return (await applied(svc, log, id, out, "react"))!;
}

/**
 * A change's outcome as the API answers it; when done, the message as it is now (its JSON), told to the thread's
 * members live (a delete already done tells nothing and answers null). A failure to tell them (Redis out) is logged:
 * the change is committed, and history and redelivery read it from Postgres.
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
