// Friend requests and friendships in Postgres. A friendship is two rows, one each way. The statements that make or
// end one run in the caller's transaction after it has taken the pair's lock (locks-store.ts: lockPair), so a moment
// published meanwhile is ordered against them.
import type { TransactionSql } from "postgres";
import type { Author } from "../../schema/common.ts";
import type { FriendRequest } from "../../schema/friends.ts";
import { type AuthorRow, toAuthor } from "../../schema/avatar-path.ts";
import type { Sql } from "../db/client.ts";

export interface RequestRow {
  id: bigint;
  from_id: string;
  to_id: string;
  status: FriendRequest["status"];
  created_at: Date;
}

/** What a request from `me` to `to` finds, read under the pair's lock. */
interface PairState {
  /** `to` exists; true without asking when the caller does not ask (a request to a person, handlers/friends.ts). */
  known: boolean;
  friends: boolean;
  /** The pending request `to` sent `me`, if any. */
  reverse: bigint | null;
  /** The pending request `me` already sent `to`, if any, and when. */
  existing: bigint | null;
  existing_at: Date | null;
}

export async function pairState(
  tx: TransactionSql,
  me: string,
  to: string,
  askKnown = true,
): Promise<PairState | undefined> {
  const [s] = await tx<PairState[]>`select
    case when ${askKnown}::boolean then exists (select 1 from principals where id = ${to}) else true end as known,
    exists (select 1 from friendships where principal = ${me} and friend = ${to}) as friends,
    (select id from friend_requests where from_id = ${to} and to_id = ${me} and status = 'pending') as reverse,
    (select id from friend_requests where from_id = ${me} and to_id = ${to} and status = 'pending') as existing,
    (select created_at from friend_requests where from_id = ${me} and to_id = ${to} and status = 'pending') as existing_at`;
  return s;
}

/** Stores a new pending request. */
export async function insertRequest(tx: TransactionSql, r: RequestRow): Promise<void> {
  await tx`insert into friend_requests (id, from_id, to_id, status, created_at)
           values (${String(r.id)}, ${r.from_id}, ${r.to_id}, 'pending', ${r.created_at})`;
}

/**
 * A request that meets the other side's pending one (`reverse`): that one is accepted, this one is stored accepted,
 * and the two become friends, in one statement.
 */
export async function insertAcceptedRequest(tx: TransactionSql, reverse: bigint, r: RequestRow): Promise<void> {
  await tx`
    with rev as (
      update friend_requests set status = 'accepted', responded_at = now() where id = ${String(reverse)}),
    req as (
      insert into friend_requests (id, from_id, to_id, status, created_at, responded_at)
      values (${String(r.id)}, ${r.from_id}, ${r.to_id}, 'accepted', ${r.created_at}, now()))
    insert into friendships (principal, friend) values (${r.from_id}, ${r.to_id}), (${r.to_id}, ${r.from_id}) on conflict do nothing`;
}

/** A pending request with, when `me` received it, who sent it (name and picture key). */
export interface PendingRow extends RequestRow {
  sender_name: string | null;
  sender_avatar: string | null;
}

/**
 * The pending requests `me` received or sent, the newest 500 of each (in no particular order between the two). A
 * received one carries its sender's name: whoever asks shows who they are. A sent one does not carry the
 * recipient's: a person has no public profile, and a request to an id tells nothing of who is behind it.
 */
export function pendingRequests(sql: Sql, me: string): Promise<PendingRow[]> {
  return sql<PendingRow[]>`
    (select r.id, r.from_id, r.to_id, r.status, r.created_at, p.display_name as sender_name, p.avatar_key as sender_avatar
     from friend_requests r join principals p on p.id = r.from_id
     where r.to_id = ${me} and r.status = 'pending'
       and not exists (select 1 from blocks b where b.blocker = ${me} and b.blocked = r.from_id)
     order by r.id desc limit 500)
    union all
    (select id, from_id, to_id, status, created_at, null, null from friend_requests
     where from_id = ${me} and status = 'pending' order by id desc limit 500)`;
}

/** Who sent the pending request `id` to `me`; null when there is no such request. */
export async function pendingRequestSender(tx: TransactionSql, id: bigint, me: string): Promise<string | null> {
  const [req] = await tx<{ from_id: string }[]>`
    select from_id from friend_requests r where id = ${String(id)} and to_id = ${me} and status = 'pending'
      and not exists (select 1 from blocks b where b.blocker = ${me} and b.blocked = r.from_id)`;
  return req?.from_id ?? null;
}

/**
 * `me` accepts the pending request `id` (and any pending one `me` sent its sender); the two become friends, in one
 * statement. The new friend, or null when the request is no longer pending.
 */
export async function acceptRequest(tx: TransactionSql, id: bigint, me: string): Promise<Author | null> {
  const [p] = await tx<AuthorRow[]>`
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
    select p.id, p.display_name, p.avatar_key from acc join principals p on p.id = acc.from_id`;
  return p ? toAuthor(p) : null;
}

/** The recipient declines the pending request `id`, or its sender withdraws it; false when there is none of `me`'s. */
export async function declineRequest(sql: Sql, id: bigint, me: string): Promise<boolean> {
  const r = await sql`
    update friend_requests
    set status = case when to_id = ${me} then 'declined' else 'withdrawn' end, responded_at = now()
    where id = ${String(id)} and status = 'pending' and (to_id = ${me} or from_id = ${me})`;
  return r.count > 0;
}

/** `me`'s friends, the newest friendship first. */
export async function friendList(sql: Sql, me: string): Promise<Author[]> {
  const rows = await sql<AuthorRow[]>`
    select p.id, p.display_name, p.avatar_key from friendships f join principals p on p.id = f.friend
    where f.principal = ${me} order by f.created_at desc, f.friend`;
  return rows.map(toAuthor);
}

/** Ends the friendship of `me` and `other` (both rows): the number of rows deleted, 0 when they were not friends. */
export async function deleteFriendship(tx: TransactionSql, me: string, other: string): Promise<number> {
  const r = await tx`
    delete from friendships
    where (principal = ${me} and friend = ${other}) or (principal = ${other} and friend = ${me})`;
  return r.count;
}

/**
 * Deletes every friend request to `id`. Requests to an id have no foreign key (one to a person is stored whoever the
 * id is: migration 0013), so they are deleted by hand: when the id becomes someone's, and when its account goes.
 */
export async function dropRequestsTo(tx: TransactionSql, id: string): Promise<void> {
  await tx`delete from friend_requests where to_id = ${id}`;
}
