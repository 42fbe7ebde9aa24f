// Groups' use cases (handlers/groups.ts calls one per request): create a group, read it, add members, remove a member
// (or leave). A group is a thread of kind 'group' (same number, `group_` and `thread_` prefixes); someone who is not
// a member gets 404, as for a group that does not exist. The owner adds and removes members; anyone may leave; an
// owner who leaves hands the group to the longest-standing member. Who may be added: runtime/social/group-consent-store.ts
// (a person only by a friend; an agent by whom it chose). Each change is one transaction, opened here, that locks the
// group's row first as a group send does (one lock order), changes the members (group-admin-store.ts) and their
// stream cursors (stream-store.ts); once committed, every node hears it (StreamDelivery.membersChanged).
import { ApiError, invalid, notFound } from "../errors.ts";
import { PREFIX } from "../ids.ts";
import type { Services } from "../services.ts";
import { refusedMembers } from "../social/group-consent-store.ts";
import { type Group, MAX_GROUP_MEMBERS } from "../../schema/groups.ts";
import {
  deleteMember,
  type GroupRow,
  groupMembers,
  handOver,
  insertGroup,
  insertMembers,
  loadGroup,
  lockGroup,
  sizeWith,
} from "./group-admin-store.ts";
import { joinGroup, leaveGroup } from "./stream-store.ts";

/** A new group of `me` (its owner) and `listed`, joining in that order; the group as its members see it. */
export async function createGroup(svc: Services, me: string, name: string, listed: string[]): Promise<Group> {
  // at most MAX_MEMBERS_PER_REQUEST listed (the schema), so the creator and they fit in a group
  const members = [...new Set([me, ...listed])];
  const id = svc.ids.nextRaw();
  const joined = await svc.sql.begin(async (tx) => {
    const missing = await refusedMembers(tx, me, members, null);
    if (missing.length > 0) throw refused(missing);
    await insertGroup(tx, id, name, me, members);
    return joinGroup(tx, id, members);
  });
  await announce(svc, id, joined, []);
  return view(svc, (await loadGroup(svc.sql, id, me))!);
}

/** The group `id` as its member `me` sees it; 404 when it is not one `me` is in. */
export async function readGroup(svc: Services, id: bigint, me: string): Promise<Group> {
  return view(svc, await memberOf(svc, id, me));
}

/** The owner `me` adds `wanted` to the group `id` (those already in it stay as they are); the group as it is now. */
export async function addMembers(svc: Services, id: bigint, me: string, wanted: string[]): Promise<Group> {
  const g = await memberOf(svc, id, me);
  requireManager(g, me);
  const adding = [...new Set(wanted)];
  const joined = await svc.sql.begin(async (tx) => {
    await lockGroup(tx, g.id); // (sends take this row too: one lock order)
    const missing = await refusedMembers(tx, me, adding, g.id);
    if (missing.length > 0) throw refused(missing);
    if ((await sizeWith(tx, g.id, adding)) > MAX_GROUP_MEMBERS) {
      throw invalid(`members: a group holds at most ${MAX_GROUP_MEMBERS} members`, { field: "members" });
    }
    await insertMembers(tx, g.id, adding);
    return joinGroup(tx, g.id, adding);
  });
  await announce(svc, g.id, joined, []);
  return view(svc, g);
}

/**
 * `member` leaves the group `id`: `me` itself, or a member the owner `me` removes; 404 `member` when it is not one.
 * Its owner leaving hands the group on.
 */
export async function removeMember(svc: Services, id: bigint, me: string, member: string): Promise<void> {
  const g = await memberOf(svc, id, me);
  if (member !== me) requireManager(g, me);
  const removed = await svc.sql.begin(async (tx) => {
    await lockGroup(tx, g.id); // first, as a send takes it: one lock order
    const gone = await deleteMember(tx, g.id, member);
    await leaveGroup(tx, g.id, member);
    if (gone && g.owner === member) await handOver(tx, g.id);
    return gone;
  });
  if (!removed) throw notFound("member");
  await announce(svc, g.id, [], [member]);
}

/** The group as the API shows it, with its members in the order they joined. */
async function view(svc: Services, g: GroupRow): Promise<Group> {
  const members = await groupMembers(svc.sql, g.id);
  return {
    id: PREFIX.group + g.id.toString(),
    name: g.name,
    owner: g.owner,
    thread_id: PREFIX.thread + g.id.toString(),
    members,
    created_at: g.created_at.toISOString(),
  };
}

async function memberOf(svc: Services, id: bigint, me: string): Promise<GroupRow> {
  const g = await loadGroup(svc.sql, id, me);
  if (!g) throw notFound("group");
  return g;
}

function requireManager(g: GroupRow, me: string): void {
  if (g.owner !== null && g.owner !== me)
    throw new ApiError("forbidden", "only the group's owner can change its members");
}

/**
 * 404 naming the ids the caller may not add: those that do not exist, people who are not the caller's friends and
 * agents that do not take adds from the caller, in one wording, so a refusal does not reveal that a hidden person
 * exists, nor which agent refused.
 */
function refused(missing: string[]): ApiError {
  return new ApiError(
    "not_found",
    `no such member, or not one you may add (a person must be your friend; an agent may choose who adds it): ${missing.join(", ")}`,
    { missing },
  );
}

/** Every node's sockets and long polls hear the change; a failure is logged (the sweep repairs it within 30 s). */
async function announce(
  svc: Services,
  id: bigint,
  joined: { member: string; acked: number }[],
  left: string[],
): Promise<void> {
  await svc.hub.streams
    .membersChanged(id, joined, left)
    .catch((err: unknown) => svc.log.warn({ err }, "group members not announced"));
}
