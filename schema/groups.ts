// Groups: a named set of members sharing one thread; messages go to every other member.
import { z } from "zod";
import { Author, displayName, principalId } from "./common.ts";
import { attachmentIds, messageBody, replyTo } from "./messages.ts";

/** Most members of a group, its owner included. */
export const MAX_GROUP_MEMBERS = 10_000;
/** Most member ids one request lists (a create, or an add): a larger group is made by adding in steps. */
export const MAX_MEMBERS_PER_REQUEST = 1000;

export const CreateGroupRequest = z.object({
  name: displayName(100),
  /** Initial members besides the creator (who always joins and owns the group). */
  members: z.array(principalId).max(MAX_MEMBERS_PER_REQUEST).default([]),
});

/** `{"members": [ids]}`, or `{"member": id}` for one. */
export const AddMembersRequest = z
  .object({
    members: z.array(principalId).min(1).max(MAX_MEMBERS_PER_REQUEST).optional(),
    member: principalId.optional(),
  })
  .refine((v) => v.members !== undefined || v.member !== undefined, {
    message: "give members (a list of ids) or member",
  })
  .transform((v) => ({ members: [...(v.members ?? []), ...(v.member !== undefined ? [v.member] : [])] }));

export const SendGroupMessageRequest = z.object({ body: messageBody, attachments: attachmentIds, reply_to: replyTo });

export const Group = z.object({
  id: z.string().startsWith("group_"),
  name: z.string(),
  /** The member who manages the group; null once the owner's account is gone (any member may then manage it). */
  owner: z.string().nullable(),
  /** The group's conversation (GET /v1/threads/{id}/messages). */
  thread_id: z.string().startsWith("thread_"),
  /** Oldest member first. */
  members: z.array(Author),
  created_at: z.string(),
});
export type Group = z.infer<typeof Group>;

export const GroupResponse = z.object({ group: Group });
