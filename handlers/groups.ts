// Groups: create, read, add and remove members, send to every other member. A group is a thread of kind
// 'group' (same number, `group_` and `thread_` prefixes); non-members get 404 as for a missing group.
// The owner adds and removes members; anyone may leave; an owner who leaves hands the group to the
// longest-standing member. Who may be added: runtime/social/group-consent.ts (a person only by a friend; an agent by whom it chose). The
// statements: runtime/messaging/group-admin-store.ts.
import { ApiError, invalid, notFound } from "../runtime/errors.ts";
import { created, defineRoute, jsonText, noContent, ok, replayed, type Route } from "../runtime/http/route.ts";
import { PREFIX, parseId } from "../runtime/ids.ts";
import { resolveAttachments } from "../runtime/messaging/attachments.ts";
import { replyQuote } from "../runtime/messaging/replies.ts";
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
} from "../runtime/messaging/group-admin-store.ts";
import { joinGroup, leaveGroup } from "../runtime/messaging/stream-store.ts";
import { sendGroup, sentBefore } from "../runtime/messaging/send.ts";
import { paidMembers } from "../runtime/payments/terms.ts";
import type { Services } from "../runtime/services.ts";
import { refusedMembers } from "../runtime/social/group-consent.ts";
import {
  AddMembersRequest,
  CreateGroupRequest,
  type Group,
  MAX_GROUP_MEMBERS,
  SendGroupMessageRequest,
} from "../schema/groups.ts";

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

function groupId(params: Record<string, string>): bigint {
  const id = parseId("group", params["id"] ?? "");
  if (id === null) throw notFound("group");
  return id;
}

async function requireMember(svc: Services, params: Record<string, string>, me: string): Promise<GroupRow> {
  const g = await loadGroup(svc.sql, groupId(params), me);
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
    {
      missing,
    },
  );
}

const create = defineRoute({
  method: "POST",
  path: "/v1/groups",
  idempotent: true,
  auth: "principal",
  body: CreateGroupRequest,
  limit: "groups",
  async handle({ body, principal, svc }) {
    // at most MAX_MEMBERS_PER_REQUEST listed (the schema), so the creator and they fit in a group
    const members = [...new Set([principal.id, ...body.members])];
    const id = svc.ids.nextRaw();
    const joined = await svc.sql.begin(async (tx) => {
      const missing = await refusedMembers(tx, principal.id, members, null);
      if (missing.length > 0) throw refused(missing);
      await insertGroup(tx, id, body.name, principal.id, members);
      return joinGroup(tx, id, members);
    });
    await svc.hub.streams
      .membersChanged(id, joined, [])
      .catch((err: unknown) => svc.log.warn({ err }, "group members not announced"));
    const g = await loadGroup(svc.sql, id, principal.id);
    return created({ group: await view(svc, g!) });
  },
});

const read = defineRoute({
  method: "GET",
  path: "/v1/groups/:id",
  auth: "principal",
  async handle({ params, principal, svc }) {
    return ok({ group: await view(svc, await requireMember(svc, params, principal.id)) });
  },
});

const addMembers = defineRoute({
  method: "POST",
  path: "/v1/groups/:id/members",
  auth: "principal",
  body: AddMembersRequest,
  limit: "groups",
  async handle({ params, body, principal, svc }) {
    const g = await requireMember(svc, params, principal.id);
    requireManager(g, principal.id);
    const wanted = [...new Set(body.members)];
    const joined = await svc.sql.begin(async (tx) => {
      await lockGroup(tx, g.id); // (sends take this row too: one lock order)
      const missing = await refusedMembers(tx, principal.id, wanted, g.id);
      if (missing.length > 0) throw refused(missing);
      if ((await sizeWith(tx, g.id, wanted)) > MAX_GROUP_MEMBERS) {
        throw invalid(`members: a group holds at most ${MAX_GROUP_MEMBERS} members`, { field: "members" });
      }
      await insertMembers(tx, g.id, wanted);
      return joinGroup(tx, g.id, wanted);
    });
    await svc.hub.streams
      .membersChanged(g.id, joined, [])
      .catch((err: unknown) => svc.log.warn({ err }, "group members not announced"));
    return ok({ group: await view(svc, g) });
  },
});

const removeMember = defineRoute({
  method: "DELETE",
  path: "/v1/groups/:id/members/:member",
  auth: "principal",
  async handle({ params, principal, svc }) {
    const g = await requireMember(svc, params, principal.id);
    const member = params["member"] ?? "";
    if (member !== principal.id) requireManager(g, principal.id);
    const removed = await svc.sql.begin(async (tx) => {
      await lockGroup(tx, g.id); // first, as a send takes it: one lock order
      const gone = await deleteMember(tx, g.id, member);
      await leaveGroup(tx, g.id, member);
      if (gone && g.owner === member) await handOver(tx, g.id);
      return gone;
    });
    if (!removed) throw notFound("member");
    await svc.hub.streams
      .membersChanged(g.id, [], [member])
      .catch((err: unknown) => svc.log.warn({ err }, "group members not announced"));
    return noContent();
  },
});

const send = defineRoute({
  method: "POST",
  path: "/v1/groups/:id/messages",
  idempotent: true,
  traced: true,
  auth: "principal",
  body: SendGroupMessageRequest,
  limit: "messages",
  async handle({ params, body, principal, svc, idempotencyKey }) {
    const threadId = groupId(params);
    const before = await sentBefore(svc, principal, idempotencyKey);
    if (before !== null) return replayed(jsonText(201, before));
    const paid = await paidMembers(svc, threadId, principal.id);
    if (paid.length > 0) {
      throw invalid(
        `group messages cannot be paid: ${paid.join(", ")} charge per message; message them directly with POST /v1/messages`,
        {
          paid_members: paid,
        },
      );
    }
    const attachments = await resolveAttachments(svc.sql, principal.id, body.attachments);
    const reply = await replyQuote(svc, threadId, body.reply_to, principal.id);
    const payload = await sendGroup(svc, principal, { threadId, body: body.body, attachments, idempotencyKey, reply });
    return jsonText(201, payload);
  },
});

export const groupRoutes: Route[] = [create, read, addMembers, removeMember, send];
