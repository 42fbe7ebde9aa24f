// Friends: send, list, accept and decline requests; list and remove friends. A friendship made or ended
// drops both principals' cached feed timelines, so the very next feed read reflects it, and tells both sides'
// WebSocket connections, which start or stop watching the other's presence.
import { conflict, invalid, notFound } from "../runtime/errors.ts";
import { defineRoute, noContent, ok, type Route } from "../runtime/http/route.ts";
import { idTime, parseId } from "../runtime/ids.ts";
import type { Logger } from "../runtime/log.ts";
import type { Services } from "../runtime/services.ts";
import { invalidate } from "../runtime/social/feed.ts";
import { announceFriendship } from "../runtime/ws/realtime.ts";
import { lockPair } from "../runtime/social/locks.ts";
import type { Author } from "../schema/common.ts";
import { principalId } from "../schema/common.ts";
import { type FriendRequest, FriendRequestBody } from "../schema/friends.ts";

interface RequestRow {
  id: bigint;
  from_id: string;
  to_id: string;
  status: FriendRequest["status"];
  created_at: Date;
}

const toRequest = (r: RequestRow): FriendRequest => ({
  id: `freq_${r.id}`,
  from: r.from_id,
  to: r.to_id,
  status: r.status,
  created_at: r.created_at.toISOString(),
});

const requestId = (params: Record<string, string>): bigint => {
  const id = parseId("request", params["id"] ?? "");
  if (id === null) throw notFound("friend request");
  return id;
};

/**
 * After a friendship's commit: both feed timelines are dropped and both sides' connections rewatch. A failure of
 * either (Redis down) costs freshness until the next rebuild or connect, not the request.
 */
async function friendshipChanged(svc: Services, log: Logger, a: string, b: string): Promise<void> {
  await invalidate(svc, log, [a, b]);
  await announceFriendship(svc, { a, b }).catch((err) => log.warn({ err }, "friendship change not announced"));
}

interface PairState {
  known: boolean;
  friends: boolean;
  reverse: bigint | null;
  existing: bigint | null;
  existing_at: Date | null;
}

/**
 * 201 with a new pending request; 201 `accepted` when the other side had already asked (both become
 * friends); 200 with the existing request when one is already pending; 409 when already friends.
 */
const sendRequest = defineRoute({
  method: "POST",
  path: "/v1/friends/request",
  auth: "principal",
  body: FriendRequestBody,
  limit: "friend_request",
  async handle({ body, principal, svc, log }) {
    const me = principal.id;
    const to = body.to;
    if (to === me) throw invalid("to: you cannot send a friend request to yourself", { field: "to" });
    const out = await svc.sql.begin(async (tx) => {
      await lockPair(tx, me, to);
      const [s] = await tx<PairState[]>`select
        exists (select 1 from principals where id = ${to}) as known,
        exists (select 1 from friendships where principal = ${me} and friend = ${to}) as friends,
        (select id from friend_requests where from_id = ${to} and to_id = ${me} and status = 'pending') as reverse,
        (select id from friend_requests where from_id = ${me} and to_id = ${to} and status = 'pending') as existing,
        (select created_at from friend_requests where from_id = ${me} and to_id = ${to} and status = 'pending') as existing_at`;
      if (!s?.known) throw notFound("principal");
      if (s.friends) throw conflict("already friends");
      if (s.existing !== null) {
        const row: RequestRow = { id: s.existing, from_id: me, to_id: to, status: "pending", created_at: s.existing_at! };
        return { status: 200, row };
      }
      const id = svc.ids.nextRaw();
      const row: RequestRow = { id, from_id: me, to_id: to, status: "pending", created_at: new Date(idTime(id)) };
      if (s.reverse === null) {
        await tx`insert into friend_requests (id, from_id, to_id, status, created_at)
                 values (${String(id)}, ${me}, ${to}, 'pending', ${row.created_at})`;
        return { status: 201, row };
      }
      row.status = "accepted";
      await tx`
        with rev as (
          update friend_requests set status = 'accepted', responded_at = now() where id = ${String(s.reverse)}),
        req as (
          insert into friend_requests (id, from_id, to_id, status, created_at, responded_at)
          values (${String(id)}, ${me}, ${to}, 'accepted', ${row.created_at}, now()))
        insert into friendships (principal, friend) values (${me}, ${to}), (${to}, ${me}) on conflict do nothing`;
      return { status: 201, row };
    });
    if (out.row.status === "accepted") await friendshipChanged(svc, log, me, to);
    return { status: out.status, body: { request: toRequest(out.row) } };
  },
});

const listRequests = defineRoute({
  method: "GET",
  path: "/v1/friends/requests",
  auth: "principal",
  async handle({ principal, svc }) {
    const me = principal.id;
    const rows = await svc.sql<RequestRow[]>`
      (select id, from_id, to_id, status, created_at from friend_requests
       where to_id = ${me} and status = 'pending' order by id desc limit 500)
      union all
      (select id, from_id, to_id, status, created_at from friend_requests
       where from_id = ${me} and status = 'pending' order by id desc limit 500)`;
    const newestFirst = [...rows].sort((a, b) => (a.id < b.id ? 1 : a.id > b.id ? -1 : 0));
    return ok({
      incoming: newestFirst.filter((r) => r.to_id === me).map(toRequest),
      outgoing: newestFirst.filter((r) => r.from_id === me).map(toRequest),
    });
  },
});

const accept = defineRoute({
  method: "POST",
  path: "/v1/friends/requests/:id/accept",
  auth: "principal",
  async handle({ params, principal, svc, log }) {
    const id = requestId(params);
    const me = principal.id;
    const friend = await svc.sql.begin(async (tx) => {
      const [req] = await tx<{ from_id: string }[]>`
        select from_id from friend_requests where id = ${String(id)} and to_id = ${me} and status = 'pending'`;
      if (!req) throw notFound("friend request");
      // Pair lock before any row lock, in the same order as sendRequest: no deadlock between them.
      await lockPair(tx, req.from_id, me);
      const [p] = await tx<Author[]>`
        with acc as (
          update friend_requests set status = 'accepted', responded_at = now()
          where id = ${String(id)} and to_id = ${me} and status = 'pending' returning from_id),
        rev as (
          update friend_requests set status = 'accepted', responded_at = now()
          where from_id = ${me} and to_id in (select from_id from acc) and status = 'pending'),
        fr as (
          insert into friendships (principal, friend)
          select ${me}, from_id from acc union all select from_id, ${me} from acc
          on conflict do nothing)
        select p.id, p.display_name from acc join principals p on p.id = acc.from_id`;
      if (!p) throw notFound("friend request");
      return { id: p.id, display_name: p.display_name };
    });
    await friendshipChanged(svc, log, me, friend.id);
    return ok({ friend });
  },
});

/** The recipient declines a pending request, or its sender withdraws it. */
const decline = defineRoute({
  method: "POST",
  path: "/v1/friends/requests/:id/decline",
  auth: "principal",
  async handle({ params, principal, svc }) {
    const id = requestId(params);
    const me = principal.id;
    const r = await svc.sql`
      update friend_requests
      set status = case when to_id = ${me} then 'declined' else 'withdrawn' end, responded_at = now()
      where id = ${String(id)} and status = 'pending' and (to_id = ${me} or from_id = ${me})`;
    if (r.count === 0) throw notFound("friend request");
    return noContent();
  },
});

const list = defineRoute({
  method: "GET",
  path: "/v1/friends",
  auth: "principal",
  async handle({ principal, svc }) {
    const rows = await svc.sql<Author[]>`
      select p.id, p.display_name from friendships f join principals p on p.id = f.friend
      where f.principal = ${principal.id} order by f.created_at desc, f.friend`;
    return ok({ friends: rows.map((r) => ({ id: r.id, display_name: r.display_name })) });
  },
});

const unfriend = defineRoute({
  method: "DELETE",
  path: "/v1/friends/:id",
  auth: "principal",
  async handle({ params, principal, svc, log }) {
    const me = principal.id;
    const other = params["id"] ?? "";
    if (!principalId.safeParse(other).success || other === me) throw notFound("friend");
    const removed = await svc.sql.begin(async (tx) => {
      await lockPair(tx, me, other);
      const r = await tx`
        delete from friendships
        where (principal = ${me} and friend = ${other}) or (principal = ${other} and friend = ${me})`;
      // Feed reads trust the timelines for visibility, so both are dropped before the friendship ends (a
      // failure here fails the request with nothing changed) and again after, which revokes the lease of
      // any rebuild that read the friendship in between.
      if (r.count > 0) await svc.engines.feed.invalidate([me, other]);
      return r.count;
    });
    if (removed === 0) throw notFound("friend");
    await friendshipChanged(svc, log, me, other);
    return noContent();
  },
});

export const friendRoutes: Route[] = [sendRequest, listRequests, accept, decline, list, unfriend];
