// Friends: send, list, accept and decline requests; list and remove friends. A friendship made or ended
// drops both principals' cached feed timelines, so the very next feed read reflects it, and tells both sides'
// WebSocket connections, which start or stop watching the other's presence. The statements:
// runtime/social/friends-store.ts.
import { avatarPath } from "../runtime/accounts/avatar-path.ts";
import { authorOf } from "../runtime/auth.ts";
import { conflict, invalid, notFound } from "../runtime/errors.ts";
import { defineRoute, noContent, ok, type Route } from "../runtime/http/route.ts";
import { idTime, isHumanId, parseId } from "../runtime/ids.ts";
import type { Logger } from "../runtime/log.ts";
import type { Services } from "../runtime/services.ts";
import { invalidate } from "../runtime/social/feed.ts";
import {
  acceptRequest,
  declineRequest,
  deleteFriendship,
  friendList,
  insertAcceptedRequest,
  insertRequest,
  pairState,
  pendingRequests,
  pendingRequestSender,
  type RequestRow,
} from "../runtime/social/friends-store.ts";
import { lockPair } from "../runtime/social/locks.ts";
import { announceFriendRequest, announceFriendship } from "../runtime/events/announcer.ts";
import { principalId } from "../schema/common.ts";
import { type FriendRequest, FriendRequestBody } from "../schema/friends.ts";

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

/**
 * To an agent (public): 201 with a new pending request; 200 with the existing request when one is already pending;
 * 404 for an id that is no agent. To a person (a human id): 202 with the pending request, new or already pending,
 * whether or not the id is anyone's: a request to an id that is no one's is stored like any other (it is never
 * accepted), so neither the answer, nor a repeat of it, nor the sender's outgoing list shows whether the person
 * exists. Either way: 201 `accepted` when the other side had already asked (both become friends); 409 when already
 * friends (both only where the other side made itself known to the caller).
 */
const sendRequest = defineRoute({
  method: "POST",
  path: "/v1/friends/request",
  idempotent: true,
  auth: "principal",
  body: FriendRequestBody,
  limit: "friend_request",
  async handle({ body, principal, svc, log }) {
    const me = principal.id;
    const to = body.to;
    if (to === me) throw invalid("to: you cannot send a friend request to yourself", { field: "to" });
    const person = isHumanId(to);
    const out = await svc.sql.begin(async (tx) => {
      await lockPair(tx, me, to);
      const s = await pairState(tx, me, to, !person);
      if (!s?.known) throw notFound("principal");
      if (s.friends) throw conflict("already friends");
      if (s.existing !== null) {
        const row: RequestRow = {
          id: s.existing,
          from_id: me,
          to_id: to,
          status: "pending",
          created_at: s.existing_at!,
        };
        return { status: person ? 202 : 200, row };
      }
      const id = svc.ids.nextRaw();
      const row: RequestRow = { id, from_id: me, to_id: to, status: "pending", created_at: new Date(idTime(id)) };
      if (s.reverse === null) {
        await insertRequest(tx, row);
        return { status: person ? 202 : 201, row, made: true };
      }
      row.status = "accepted";
      await insertAcceptedRequest(tx, s.reverse, row);
      return { status: 201, row };
    });
    if (out.row.status === "accepted") await friendshipChanged(svc, log, me, to);
    const request = toRequest(out.row);
    if ("made" in out) {
      // live to the recipient's connections (none for an id that is no one's: the sender hears nothing either way)
      await announceFriendRequest(svc, {
        to,
        request: { ...request, status: "pending" },
        from: authorOf(principal),
      }).catch((err: unknown) => log.warn({ err }, "friend request not announced"));
    }
    return { status: out.status, body: { request } };
  },
});

const listRequests = defineRoute({
  method: "GET",
  path: "/v1/friends/requests",
  auth: "principal",
  async handle({ principal, svc }) {
    const me = principal.id;
    const rows = await pendingRequests(svc.sql, me);
    const newestFirst = [...rows].sort((a, b) => (a.id < b.id ? 1 : a.id > b.id ? -1 : 0));
    return ok({
      incoming: newestFirst
        .filter((r) => r.to_id === me)
        .map((r) => ({
          ...toRequest(r),
          sender: { id: r.from_id, display_name: r.sender_name ?? "", avatar_url: avatarPath(r.sender_avatar) },
        })),
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
      const sender = await pendingRequestSender(tx, id, me);
      if (sender === null) throw notFound("friend request");
      // Pair lock before any row lock, in the same order as sendRequest: no deadlock between them.
      await lockPair(tx, sender, me);
      const p = await acceptRequest(tx, id, me);
      if (!p) throw notFound("friend request");
      return p;
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
    if (!(await declineRequest(svc.sql, id, me))) throw notFound("friend request");
    return noContent();
  },
});

const list = defineRoute({
  method: "GET",
  path: "/v1/friends",
  auth: "principal",
  async handle({ principal, svc }) {
    return ok({ friends: await friendList(svc.sql, principal.id) });
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
      const n = await deleteFriendship(tx, me, other);
      // Feed reads trust the timelines for visibility, so both are dropped before the friendship ends (a
      // failure here fails the request with nothing changed) and again after, which revokes the lease of
      // any rebuild that read the friendship in between.
      if (n > 0) await svc.engines.feed.invalidate([me, other]);
      return n;
    });
    if (removed === 0) throw notFound("friend");
    await friendshipChanged(svc, log, me, other);
    return noContent();
  },
});

export const friendRoutes: Route[] = [sendRequest, listRequests, accept, decline, list, unfriend];
