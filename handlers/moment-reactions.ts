// Likes and comments on moments (SPEC 4.3-4.6). A moment the caller cannot see answers 404, exactly as a
// missing one, and so does a moment past the moments horizon (runtime/retention/horizons.ts). Counts stay exact: each like/unlike/comment updates the moment's counter in the same
// statement that inserts or deletes its row (ON CONFLICT DO NOTHING makes a repeated like a no-op), raises
// the moment's `rev`, and hands the new counts to the moment record cache before the answer goes out.
// Likes and unlikes go to Postgres by group commit (runtime/social/likes.ts), comments through
// runtime/social/comments-store.ts.
import { avatarPath } from "../schema/avatar-path.ts";
import { authorOf } from "../runtime/auth.ts";
import { checkSpam } from "../runtime/moderation/spam.ts";
import { notFound } from "../runtime/errors.ts";
import { created, defineRoute, noContent, type Route } from "../runtime/http/route.ts";
import { idTime, parseId } from "../runtime/ids.ts";
import { recordCounts } from "../runtime/social/feed.ts";
import { commentsPage, insertComment } from "../runtime/social/comments-store.ts";
import { type Comment, CommentsQuery, CreateCommentRequest } from "../schema/moments.ts";

const momentId = (params: Record<string, string>): bigint => {
  const id = parseId("moment", params["id"] ?? "");
  if (id === null) throw notFound("moment");
  return id;
};

const like = defineRoute({
  method: "POST",
  path: "/v1/moments/:id/like",
  auth: "principal",
  scope: "social:write",
  async handle({ params, principal, svc, log }) {
    const r = await svc.likes.like({
      moment: momentId(params),
      principal: principal.id,
      horizon: svc.horizons.moments(),
    });
    await recordCounts(svc, log, [r], principal.id);
    return noContent();
  },
});

const unlike = defineRoute({
  method: "DELETE",
  path: "/v1/moments/:id/like",
  auth: "principal",
  scope: "social:write",
  async handle({ params, principal, svc, log }) {
    const r = await svc.likes.unlike({
      moment: momentId(params),
      principal: principal.id,
      horizon: svc.horizons.moments(),
    });
    await recordCounts(svc, log, [r], principal.id);
    return noContent();
  },
});

const comment = defineRoute({
  method: "POST",
  path: "/v1/moments/:id/comments",
  idempotent: true,
  auth: "principal",
  scope: "social:write",
  body: CreateCommentRequest,
  async handle({ params, body, principal, svc, log, ip }) {
    const id = momentId(params);
    await checkSpam(svc, principal, ip, "comments", body.body);
    const me = principal.id;
    const cid = svc.ids.nextRaw();
    const createdAt = new Date(idTime(cid));
    // null also when the moment was deleted while we wrote: 404 like any missing moment
    const r = await insertComment(
      svc.sql,
      { id: cid, moment: id, author: me, body: body.body, createdAt },
      svc.horizons.moments(),
    );
    if (!r) throw notFound("moment");
    await recordCounts(svc, log, [r], principal.id);
    const out: Comment = {
      id: `comment_${cid}`,
      body: body.body,
      author: authorOf(principal),
      created_at: createdAt.toISOString(),
    };
    return created(out);
  },
});

/**
 * Oldest first, at most `limit` (default and maximum 100). The next page starts after the last comment:
 * `?after=<its id>`; when there is one, the answer carries `Link: <...>; rel="next"`.
 */
const listComments = defineRoute({
  method: "GET",
  path: "/v1/moments/:id/comments",
  auth: "principal",
  scope: "read",
  query: CommentsQuery,
  async handle({ params, query, principal, svc }) {
    const id = momentId(params);
    const after = query.after ?? 0n;
    // One row with null comment columns when the moment is visible but has no (further) comments.
    const rows = await commentsPage(svc.sql, id, principal.id, {
      after,
      limit: query.limit,
      horizon: svc.horizons.moments(),
    });
    if (rows.length === 0) throw notFound("moment");
    const list: Comment[] = [];
    for (const r of rows) {
      if (r.id === null || list.length === query.limit) continue;
      list.push({
        id: `comment_${r.id}`,
        body: r.body!,
        author: { id: r.author!, display_name: r.display_name ?? "", avatar_url: avatarPath(r.avatar_key) },
        created_at: r.created_at!.toISOString(),
      });
    }
    const headers: Record<string, string> = {};
    const last = list[list.length - 1];
    if (rows.length > query.limit && last) {
      headers["Link"] = `</v1/moments/moment_${id}/comments?after=${last.id}&limit=${query.limit}>; rel="next"`;
    }
    return { status: 200, body: list, headers };
  },
});

export const momentReactionRoutes: Route[] = [like, unlike, comment, listComments];
