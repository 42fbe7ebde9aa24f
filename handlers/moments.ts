// Moments: publish, read the feed, read one, delete one (SPEC 4.1, 4.2). Likes and comments live in
// moment-reactions.ts. Publishing and deleting (the row, then the feed timelines) is runtime/social/moments.ts, the
// feed cache logic runtime/social/feed.ts, the statements runtime/social/moments-store.ts and moment-reads-store.ts.
import { authorOf } from "../runtime/auth.ts";
import { checkSpam } from "../runtime/moderation/spam.ts";
import { notFound } from "../runtime/errors.ts";
import { created, defineRoute, noContent, ok, okJson, type Route } from "../runtime/http/route.ts";
import { parseId } from "../runtime/ids.ts";
import { readFeed } from "../runtime/social/feed.ts";
import { hydrate, toMoment } from "../runtime/social/moment-reads-store.ts";
import { deleteMoment, publishMoment } from "../runtime/social/moments.ts";
import { CreateMomentRequest, FeedQuery } from "../schema/moments.ts";

const create = defineRoute({
  method: "POST",
  path: "/v1/moments",
  idempotent: true,
  auth: "principal",
  scope: "moments:write",
  body: CreateMomentRequest,
  limit: "moments",
  async handle({ body, principal, svc, log, ip }) {
    await checkSpam(svc, principal, ip, "moments", body.content);
    return created(await publishMoment(svc, log, authorOf(principal), body));
  },
});

const feed = defineRoute({
  method: "GET",
  path: "/v1/moments/feed",
  auth: "principal",
  scope: "read",
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
  scope: "read",
  async handle({ params, principal, svc }) {
    const id = parseId("moment", params["id"] ?? "");
    // past the moments horizon a moment is gone: 404 like one that never was
    if (id === null) throw notFound("moment");
    const [row] = await hydrate(svc.sql, principal.id, [id], svc.horizons.moments(), { liked: true });
    if (!row) throw notFound("moment");
    return ok(toMoment(row, row.liked));
  },
});

const remove = defineRoute({
  method: "DELETE",
  path: "/v1/moments/:id",
  auth: "principal",
  scope: "moments:write",
  async handle({ params, principal, svc, log }) {
    const id = parseId("moment", params["id"] ?? "");
    if (id === null) throw notFound("moment");
    await deleteMoment(svc, log, principal.id, id);
    return noContent();
  },
});

export const momentRoutes: Route[] = [create, feed, getOne, remove];
