// Friends: send, list, accept and decline requests; list and remove friends. Making and ending friendships (their
// transactions, the feeds they drop and the connections they tell) is runtime/social/friendships.ts; the statements
// are runtime/social/friends-store.ts.
import { checkSpam } from "../runtime/moderation/spam.ts";
import { avatarPath } from "../schema/avatar-path.ts";
import { invalid, notFound } from "../runtime/errors.ts";
import { defineRoute, noContent, ok, type Route } from "../runtime/http/route.ts";
import { isHumanId, parseId } from "../runtime/ids.ts";
import { declineRequest, friendList, pendingRequests } from "../runtime/social/friends-store.ts";
import {
  acceptFriendRequest,
  endFriendship,
  sendFriendRequest,
  toFriendRequest,
} from "../runtime/social/friendships.ts";
import { principalId } from "../schema/common.ts";
import { FriendRequestBody } from "../schema/friends.ts";

const requestId = (params: Record<string, string>): bigint => {
  const id = parseId("request", params["id"] ?? "");
  if (id === null) throw notFound("friend request");
  return id;
};

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
  scope: "social:write",
  body: FriendRequestBody,
  limit: "friend_request",
  async handle({ body, principal, svc, log, ip }) {
    const to = body.to;
    if (to === principal.id) throw invalid("to: you cannot send a friend request to yourself", { field: "to" });
    await checkSpam(svc, principal, ip, "friend_requests");
    const { outcome, request } = await sendFriendRequest(svc, log, principal, to);
    const status = outcome === "accepted" ? 201 : isHumanId(to) ? 202 : outcome === "sent" ? 201 : 200;
    return { status, body: { request } };
  },
});

const listRequests = defineRoute({
  method: "GET",
  path: "/v1/friends/requests",
  auth: "principal",
  scope: "read",
  async handle({ principal, svc }) {
    const me = principal.id;
    const rows = await pendingRequests(svc.sql, me);
    const newestFirst = [...rows].sort((a, b) => (a.id < b.id ? 1 : a.id > b.id ? -1 : 0));
    return ok({
      incoming: newestFirst
        .filter((r) => r.to_id === me)
        .map((r) => ({
          ...toFriendRequest(r),
          sender: { id: r.from_id, display_name: r.sender_name ?? "", avatar_url: avatarPath(r.sender_avatar) },
        })),
      outgoing: newestFirst.filter((r) => r.from_id === me).map(toFriendRequest),
    });
  },
});

const accept = defineRoute({
  method: "POST",
  path: "/v1/friends/requests/:id/accept",
  auth: "principal",
  scope: "social:write",
  async handle({ params, principal, svc, log }) {
    const friend = await acceptFriendRequest(svc, log, principal.id, requestId(params));
    return ok({ friend });
  },
});

/** The recipient declines a pending request, or its sender withdraws it. */
const decline = defineRoute({
  method: "POST",
  path: "/v1/friends/requests/:id/decline",
  auth: "principal",
  scope: "social:write",
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
  scope: "read",
  async handle({ principal, svc }) {
    return ok({ friends: await friendList(svc.sql, principal.id) });
  },
});

const unfriend = defineRoute({
  method: "DELETE",
  path: "/v1/friends/:id",
  auth: "principal",
  scope: "social:write",
  async handle({ params, principal, svc, log }) {
    const me = principal.id;
    const other = params["id"] ?? "";
    if (!principalId.safeParse(other).success || other === me) throw notFound("friend");
    await endFriendship(svc, log, me, other);
    return noContent();
  },
});

export const friendRoutes: Route[] = [sendRequest, listRequests, accept, decline, list, unfriend];
