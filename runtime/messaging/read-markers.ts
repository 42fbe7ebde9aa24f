// A member marks a thread read (POST /v1/threads/:id/read; handlers/threads.ts calls it): the marker moves forward
// only, in one statement (read-markers-store.ts), and when it moved the thread's members hear a `read` event (the
// caller's own other connections always; the others unless the caller is a person who turned read receipts off).
import { type Principal, authorOf } from "../auth.ts";
import { notFound } from "../errors.ts";
import { PREFIX } from "../ids.ts";
import type { Logger } from "../log.ts";
import type { Services } from "../services.ts";
import { markRead } from "./read-markers-store.ts";

/** The caller's marker in a thread, as the API answers it. */
export interface ReadMarker {
  thread_id: string;
  read_through: string;
  unread_count: number;
}

/**
 * `reader` marks thread `threadId` read through its message `through`: 404 `thread` when it is not a member, 404
 * `message` when `through` is not one of the thread's messages (whether it exists elsewhere is not told) or went past
 * retention. A failure to tell the members is logged: the marker is committed.
 */
export async function markThreadRead(
  svc: Services,
  log: Logger,
  reader: Principal,
  threadId: bigint,
  through: bigint,
): Promise<ReadMarker> {
  const out = await markRead(svc.sql, threadId, reader.id, through, svc.horizons.messages());
  if (out.kind === "no_thread") throw notFound("thread");
  if (out.kind === "no_message") throw notFound("message");
  const thread = PREFIX.thread + threadId.toString();
  const readThrough = PREFIX.message + out.through.toString();
  if (out.moved) {
    const to = out.receipts ? out.members : [reader.id];
    await svc.announce
      .read({ thread, from: authorOf(reader), through: readThrough, to })
      .catch((err: unknown) => log.warn({ err }, "read receipt not announced"));
  }
  return { thread_id: thread, read_through: readThrough, unread_count: out.unread };
}
