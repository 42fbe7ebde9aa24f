// Groups: create, read, add and remove members, send to every other member; each route parses its request and calls
// one use case: runtime/messaging/group-admin.ts (who may do what, the transactions) or the send use case
// (runtime/messaging/send-message.ts). A group id that cannot be one is 404, as for a group that does not exist.
import { notFound } from "../runtime/errors.ts";
import { created, defineRoute, noContent, ok, type Route } from "../runtime/http/route.ts";
import { parseId } from "../runtime/ids.ts";
import { addMembers, createGroup, readGroup, removeMember } from "../runtime/messaging/group-admin.ts";
import { sendMessage } from "../runtime/messaging/send-message.ts";
import { AddMembersRequest, CreateGroupRequest, SendGroupMessageRequest } from "../schema/groups.ts";

function groupId(params: Record<string, string>): bigint {
  const id = parseId("group", params["id"] ?? "");
  if (id === null) throw notFound("group");
  return id;
}

const create = defineRoute({
  method: "POST",
  path: "/v1/groups",
  idempotent: true,
  auth: "principal",
  scope: "social:write",
  body: CreateGroupRequest,
  limit: "groups",
  async handle({ body, principal, svc }) {
    return created({ group: await createGroup(svc, principal.id, body.name, body.members) });
  },
});

const read = defineRoute({
  method: "GET",
  path: "/v1/groups/:id",
  auth: "principal",
  scope: "read",
  async handle({ params, principal, svc }) {
    return ok({ group: await readGroup(svc, groupId(params), principal.id) });
  },
});

const add = defineRoute({
  method: "POST",
  path: "/v1/groups/:id/members",
  auth: "principal",
  scope: "social:write",
  body: AddMembersRequest,
  limit: "groups",
  async handle({ params, body, principal, svc }) {
    return ok({ group: await addMembers(svc, groupId(params), principal.id, body.members) });
  },
});

const remove = defineRoute({
  method: "DELETE",
  path: "/v1/groups/:id/members/:member",
  auth: "principal",
  scope: "social:write",
  async handle({ params, principal, svc }) {
    await removeMember(svc, groupId(params), principal.id, params["member"] ?? "");
    return noContent();
  },
});

const send = defineRoute({
  method: "POST",
  path: "/v1/groups/:id/messages",
  idempotent: "folded",
  traced: true,
  auth: "principal",
  scope: "messages:write",
  body: SendGroupMessageRequest,
  limit: "messages",
  async handle(ctx) {
    const { body, attachments, reply_to } = ctx.body;
    return sendMessage(ctx, { group: groupId(ctx.params), body, attachments, replyTo: reply_to });
  },
});

export const groupRoutes: Route[] = [create, read, add, remove, send];
