// Friendships made and ended: a friend request sent (which meets a pending one the other way, or waits for an
// answer), accepted, and a friendship ended. Each runs its statements (friends-store.ts) in one transaction under the
// pair's lock (locks-store.ts), so a moment published meanwhile is ordered against it. A friendship made or ended
// drops both principals' cached feed timelines, so the very next feed read reflects it, and tells both sides'
// connections, which start or stop watching the other's presence.
import type { Author } from "../../schema/common.ts";
import type { FriendRequest } from "../../schema/friends.ts";
import { type Principal, authorOf } from "../auth.ts";
import { conflict, notFound } from "../errors.ts";
import { idTime, isHumanId } from "../ids.ts";
import type { Logger } from "../log.ts";
import type { Services } from "../services.ts";
import { invalidate } from "./feed.ts";
import {
  acceptRequest,
  deleteFriendship,
  insertAcceptedRequest,
  insertRequest,
  pairState,
  pendingRequestSender,
  type RequestRow,
} from "./friends-store.ts";
import { lockPair } from "./locks-store.ts";

/** A request as the API shows it. */
export const toFriendRequest = (r: RequestRow): FriendRequest => ({
  id: `freq_${r.id}`,
  from: r.from_id,
  to: r.to_id,
  status: r.status,
  created_at: r.created_at.toISOString(),
});

/** What sending a friend request came to. */
export interface RequestSent {
  /**
   * `pending`: the request `from` had sent `to` already, still pending; `sent`: a new pending request; `accepted`:
   * `to` had asked already, and both are friends now.
   */
  outcome: "pending" | "sent" | "accepted";
  request: FriendRequest;
}

/**
 * After a friendship's commit: both feed timelines are dropped and both sides' connections rewatch. A failure of
 * either (Redis down) costs freshness until the next rebuild or connect, not the request.
 */
async function friendshipChanged(svc: Services, log: Logger, a: string, b: string): Promise<void> {
  await invalidate(svc, log, [a, b]);
  await svc.announce.friendship({ a, b }).catch((err) => log.warn({ err }, "friendship change not announced"));
}

/**
 * `from` asks `to` to be friends. 404 for an agent id that is no one's; a request to a person (a human id) is stored
 * whoever the id is (it is never accepted then), so nothing here shows whether the person exists. 409 when they are
 * friends already. A new pending request is told live to the recipient's connections.
 */
export async function sendFriendRequest(svc: Services, log: Logger, from: Principal, to: string): Promise<RequestSent> {
  const me = from.id;
  const person = isHumanId(to);
  // Blocks (blocks.ts): the blocker is told; the blocked one's request is stored and answered as any other, but never
  // told to the blocker, nor listed for them, nor acceptable (friends-store.ts), so the answer tells nothing.
  const rel = await svc.relations.of(me);
  if (rel.blocking.has(to)) throw conflict("you blocked this principal: unblock them (DELETE /v1/blocks/{id}) first");
  const silent = rel.blockedBy.has(to);
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
      return { outcome: "pending" as const, row };
    }
    const id = svc.ids.nextRaw();
    const row: RequestRow = { id, from_id: me, to_id: to, status: "pending", created_at: new Date(idTime(id)) };
    if (s.reverse === null) {
      await insertRequest(tx, row);
      return { outcome: "sent" as const, row };
    }
    row.status = "accepted";
    await insertAcceptedRequest(tx, s.reverse, row);
    return { outcome: "accepted" as const, row };
  });
  if (out.outcome === "accepted") await friendshipChanged(svc, log, me, to);
  const request = toFriendRequest(out.row);
  if (out.outcome === "sent" && !silent) {
    // live to the recipient's connections (none for an id that is no one's: the sender hears nothing either way)
    await svc.announce
      .friendRequest({
        to,
        request: { ...request, status: "pending" },
        from: authorOf(from),
      })
      .catch((err: unknown) => log.warn({ err }, "friend request not announced"));
    // and pushed, behind the answer, to a recipient with a push subscription and no open page
    svc.push.notifier.friendRequest(to, { display_name: from.displayName });
  }
  return { outcome: out.outcome, request };
}

/** `me` accepts the pending request `id` sent to them: the new friend. 404 when there is no such pending request. */
export async function acceptFriendRequest(svc: Services, log: Logger, me: string, id: bigint): Promise<Author> {
  const friend = await svc.sql.begin(async (tx) => {
    const sender = await pendingRequestSender(tx, id, me);
    if (sender === null) throw notFound("friend request");
    // Pair lock before any row lock, in the same order as sendFriendRequest: no deadlock between them.
    await lockPair(tx, sender, me);
    const p = await acceptRequest(tx, id, me);
    if (!p) throw notFound("friend request");
    return p;
  });
  await friendshipChanged(svc, log, me, friend.id);
  return friend;
}

/** Ends the friendship of `me` and `other`. 404 when they are not friends. */
export async function endFriendship(svc: Services, log: Logger, me: string, other: string): Promise<void> {
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
}
