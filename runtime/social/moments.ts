// Publishing and deleting a moment: its row (moments-store.ts), then the feed timelines it belongs in (feed.ts), then
// (behind the answer) its announcement to the connections that may see it (runtime/ws/moment-relay.ts). A
// deleted moment is tombstoned in the moment record cache before its delete commits, so no cached copy can outlive
// it (runtime/engines/moments.ts), and leaves the timelines it was pushed to after.
import type { Author } from "../../schema/common.ts";
import type { Moment, MomentCreated, Visibility } from "../../schema/moments.ts";
import { notFound } from "../errors.ts";
import { idTime } from "../ids.ts";
import type { Logger } from "../log.ts";
import type { Services } from "../services.ts";
import { fanOut, timelinesFor, unFanOut } from "./feed.ts";
import { friendsOf } from "./moment-reads-store.ts";
import { deleteOwnMoment, insertMoment } from "./moments-store.ts";

/**
 * Publishes a moment by `by` and pushes it to the timelines it belongs in, then announces it: the moment as created.
 */
export async function publishMoment(
  svc: Services,
  log: Logger,
  by: Author,
  m: { content: string; visibility: Visibility },
): Promise<MomentCreated> {
  const author = by.id;
  const id = svc.ids.nextRaw();
  const createdAt = new Date(idTime(id));
  const friends = await insertMoment(svc.sql, {
    id,
    author,
    content: m.content,
    visibility: m.visibility,
    createdAt,
  });
  await fanOut(svc, log, id, timelinesFor(author, m.visibility, friends));
  const made: MomentCreated = {
    id: `moment_${id}`,
    content: m.content,
    visibility: m.visibility,
    created_at: createdAt.toISOString(),
  };
  const shown: Moment = { ...made, author: by, like_count: 0, comment_count: 0, liked_by_me: false };
  void svc.announce
    .moment({ author, visibility: m.visibility, payload: JSON.stringify(shown) })
    .catch((err: unknown) => log.warn({ err }, "moment not announced"));
  return made;
}

/** Deletes the moment `id` of `me` and takes it out of the timelines. 404 when `me` has no such moment (any more). */
export async function deleteMoment(svc: Services, log: Logger, me: string, id: bigint): Promise<void> {
  const visibility = await svc.sql.begin(async (tx) => {
    const v = await deleteOwnMoment(tx, id, me, svc.horizons.moments());
    // tombstoned before the delete commits: no cached copy can outlive it
    if (v) await svc.engines.moments.forget([id]);
    return v;
  });
  if (!visibility) throw notFound("moment");
  const friends = visibility === "friends" ? await friendsOf(svc.sql, me) : [];
  await unFanOut(svc, log, id, timelinesFor(me, visibility, friends));
}
