// Moments: publish, read the feed, read one, delete one (SPEC 4.1, 4.2). Likes and comments live in
// moment-reactions.ts; the feed cache logic in runtime/social/feed.ts, the statements in runtime/social/moments-store.ts.
import { notFound } from "../runtime/errors.ts";
import { created, defineRoute, noContent, ok, okJson, type Route } from "../runtime/http/route.ts";
import { idTime, parseId } from "../runtime/ids.ts";
import { fanOut, readFeed, timelinesFor, unFanOut } from "../runtime/social/feed.ts";
import { friendsOf, hydrate, toMoment } from "../runtime/social/moments-sql.ts";
import { deleteOwnMoment, insertMoment } from "../runtime/social/moments-store.ts";
import { CreateMomentRequest, FeedQuery, type MomentCreated } from "../schema/moments.ts";

const create = defineRoute({
  method: "POST",
  path: "/v1/moments",
  idempotent: true,
  auth: "principal",
  body: CreateMomentRequest,
  limit: "moments",
  async handle({ body, principal, svc, log }) {
    const id = svc.ids.nextRaw();
    const createdAt = new Date(idTime(id));
    const me = principal.id;
    const friends = await insertMoment(svc.sql, {
      id,
      author: me,
      content: body.content,
      visibility: body.visibility,
      createdAt,
    });
    await fanOut(svc, log, id, timelinesFor(me, body.visibility, friends));
    const out: MomentCreated = {
      id: `moment_${id}`,
      content: body.content,
      visibility: body.visibility,
      created_at: createdAt.toISOString(),
    };
    return created(out);
  },
});

const feed = defineRoute({
  method: "GET",
  path: "/v1/moments/feed",
  auth: "principal",
  query: FeedQuery,
  async handle({ query, principal, svc, log }) {
    const page = await readFeed(svc, log, principal.id, query.before ?? null, query.limit);
    // The moments arrive as JSON already (from the record cache): join them rather than parse and re-encode.
    return okJson(`{"moments":[${page.moments}],"has_more":${page.hasMore}}`);
  },
});

const getOne = defineRoute({
  method: "GET",
  path: "/v1/moments/:id",
  auth: "principal",
  async handle({ params, principal, svc }) {
    const id = parseId("moment", params["id"] ?? "");
    // past the moments horizon a moment is gone: 404 like one that never was
    const [row] = id === null ? [] : await hydrate(svc.sql, principal.id, [id], svc.horizons.moments());
    if (!row) throw notFound("moment");
    return ok(toMoment(row));
  },
});

const remove = defineRoute({
  method: "DELETE",
  path: "/v1/moments/:id",
  auth: "principal",
  async handle({ params, principal, svc, log }) {
    const id = parseId("moment", params["id"] ?? "");
    if (id === null) throw notFound("moment");
    const me = principal.id;
    const visibility = await svc.sql.begin(async (tx) => {
      const v = await deleteOwnMoment(tx, id, me, svc.horizons.moments());
      // Tombstoned before the delete commits: no cached copy can outlive it (runtime/engines/moments.ts).
      if (v) await svc.engines.moments.forget([id]);
      return v;
    });
    if (!visibility) throw notFound("moment");
    const friends = visibility === "friends" ? await friendsOf(svc.sql, me) : [];
    await unFanOut(svc, log, id, timelinesFor(me, visibility, friends));
    return noContent();
  },
});

export const momentRoutes: Route[] = [create, feed, getOne, remove];
