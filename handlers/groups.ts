// Groups: create, read, add and remove members, send to every other member. A group is a thread of kind
// 'group' (same number, `group_` and `thread_` prefixes); non-members get 404 as for a missing group.
// The owner adds and removes members; anyone may leave; an owner who leaves hands the group to the
// longest-standing member. Who may be added: runtime/social/group-consent.ts (a person only by a friend).
import { ApiError, invalid, notFound } from "../runtime/errors.ts";
import { created, defineRoute, noContent, ok, type Route } from "../runtime/http/route.ts";
import { PREFIX, parseId } from "../runtime/ids.ts";
import { resolveAttachments } from "../runtime/messaging/attachments.ts";
import { joinGroup, leaveGroup } from "../runtime/messaging/stream-store.ts";
import { sendGroup } from "../runtime/messaging/send.ts";
import { paidMembers } from "../runtime/payments/terms.ts";
import type { Services } from "../runtime/services.ts";
import { refusedMembers } from "../runtime/social/group-consent.ts";
import { AddMembersRequest, CreateGroupRequest, type Group, MAX_GROUP_MEMBERS, SendGroupMessageRequest } from "../schema/groups.ts";
import { jsonText } from "./messages.ts";

interface GroupRow {
  id: bigint;
  name: string;
  owner: string | null;
  created_at: Date;
  is_member: boolean;
}

/** The group as `me` may see it: null when it does not exist or `me` is not a member. */
async function loadGroup(svc: Services, id: bigint, me: string): Promise<GroupRow | null> {
  const [row] = await svc.sql<GroupRow[]>`
    select g.id, g.name, g.owner, g.created_at,
      exists (select 1 from thread_members where thread_id = g.id and principal = ${me}) as is_member
    from groups g where g.id = ${String(id)}`;
  return row?.is_member ? row : null;
}

async function view(svc: Services, g: GroupRow): Promise<Group> {
  const members = await svc.sql<{ id: string; display_name: string }[]>`
    select tm.principal as id, p.display_name
    from thread_members tm join principals p on p.id = tm.principal
    where tm.thread_id = ${String(g.id)}
    order by tm.joined_at, tm.principal`;
  return {
    id: PREFIX.group + g.id.toString(),
    name: g.name,
    owner: g.owner,
    thread_id: PREFIX.thread + g.id.toString(),
    members: members.map((m) => ({ id: m.id, display_name: m.display_name })),
    created_at: g.created_at.toISOString(),
  };
}

function groupId(params: Record<string, string>): bigint {
  const id = parseId("group", params["id"] ?? "");
  if (id === null) throw notFound("group");
  return id;
}

async function requireMember(svc: Services, params: Record<string, string>, me: string): Promise<GroupRow> {
  const g = await loadGroup(svc, groupId(params), me);
  if (!g) throw notFound("group");
  return g;
}

function requireManager(g: GroupRow, me: string): void {
  if (g.owner !== null && g.owner !== me) throw new ApiError("forbidden", "only the group's owner can change its members");
}

/**
 * 404 naming the ids the caller may not add: those that do not exist and people who are not the caller's friends,
 * in one wording, so a refusal does not reveal that a hidden person exists.
 */
function refused(missing: string[]): ApiError {
  return new ApiError("not_found", `no such member, or not one you may add (a person must be your friend): ${missing.join(", ")}`, {
    missing,
  });
}

const create = defineRoute({
  method: "POST",
  path: "/v1/groups",
  auth: "principal",
  body: CreateGroupRequest,
  limit: "groups",
  async handle({ body, principal, svc }) {
    const members = [...new Set([principal.id, ...body.members])];
    if (members.length > MAX_GROUP_MEMBERS) {
      throw invalid(`members: a group holds at most ${MAX_GROUP_MEMBERS} members`, { field: "members" });
    }
    const id = svc.ids.nextRaw();
    const joined = await svc.sql.begin(async (tx) => {
      const missing = await refusedMembers(tx, principal.id, members, null);
      if (missing.length > 0) throw refused(missing);
      await tx`insert into threads (id, kind) values (${String(id)}, 'group')`;
      await tx`insert into groups (id, name, owner) values (${String(id)}, ${body.name}, ${principal.id})`;
      // joined_at preserves the order given, the creator first
      await tx`
        insert into thread_members (thread_id, principal, joined_at)
        select ${String(id)}, m.p, now() + (m.n * interval '1 microsecond')
        from unnest(${members}::text[]) with ordinality as m(p, n)`;
      return joinGroup(tx, id, members);
    });
    await svc.hub.streams.membersChanged(id, joined, []).catch((err: unknown) => svc.log.warn({ err }, "group members not announced"));
    const g = await loadGroup(svc, id, principal.id);
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
      await tx`select 1 from groups where id = ${String(g.id)} for update`; // (sends take this row too: one lock order)
      const missing = await refusedMembers(tx, principal.id, wanted, g.id);
      if (missing.length > 0) throw refused(missing);
      const [n] = await tx<{ count: bigint }[]>`select count(*) as count from thread_members where thread_id = ${String(g.id)}`;
      const [fresh] = await tx<{ count: bigint }[]>`
        select count(*) as count from unnest(${wanted}::text[]) as w(p)
        where not exists (select 1 from thread_members where thread_id = ${String(g.id)} and principal = w.p)`;
      if (Number(n!.count) + Number(fresh!.count) > MAX_GROUP_MEMBERS) {
        throw invalid(`members: a group holds at most ${MAX_GROUP_MEMBERS} members`, { field: "members" });
      }
      await tx`
        insert into thread_members (thread_id, principal, joined_at)
        select ${String(g.id)}, m.p, now() + (m.n * interval '1 microsecond')
        from unnest(${wanted}::text[]) with ordinality as m(p, n)
        on conflict do nothing`;
      return joinGroup(tx, g.id, wanted);
    });
    await svc.hub.streams.membersChanged(g.id, joined, []).catch((err: unknown) => svc.log.warn({ err }, "group members not announced"));
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
      await tx`select 1 from groups where id = ${String(g.id)} for update`; // first, as a send takes it: one lock order
      const gone = await tx`delete from thread_members where thread_id = ${String(g.id)} and principal = ${member} returning 1`;
      await leaveGroup(tx, g.id, member);
      if (gone.length > 0 && g.owner === member) {
        await tx`
          update groups set owner = (
            select principal from thread_members where thread_id = ${String(g.id)} order by joined_at, principal limit 1
          ) where id = ${String(g.id)}`;
      }
      return gone.length > 0;
    });
    if (!removed) throw notFound("member");
    await svc.hub.streams.membersChanged(g.id, [], [member]).catch((err: unknown) => svc.log.warn({ err }, "group members not announced"));
    return noContent();
  },
});

const send = defineRoute({
  method: "POST",
  path: "/v1/groups/:id/messages",
  auth: "principal",
  body: SendGroupMessageRequest,
  limit: "messages",
  async handle({ params, body, principal, svc }) {
    const threadId = groupId(params);
    const paid = await paidMembers(svc, threadId, principal.id);
    if (paid.length > 0) {
      throw invalid(`group messages cannot be paid: ${paid.join(", ")} charge per message; message them directly with POST /v1/messages`, {
        paid_members: paid,
      });
    }
    const attachments = await resolveAttachments(svc.sql, principal.id, body.attachments);
    const payload = await sendGroup(svc, principal, { threadId, body: body.body, attachments });
    return jsonText(201, payload);
  },
});

export const groupRoutes: Route[] = [create, read, addMembers, removeMember, send];
