// Groups: create, list, show, add and remove members, leave, send. --json prints the API's answer ({"group": {...}}).
import type { Group } from "../types.ts";
import { type Command, need } from "./context.ts";
import { findThread, myId } from "./messages.ts";

const groupText = (g: Group) =>
  [
    `${g.id}  ${g.name}  (thread ${g.thread_id}, owner ${g.owner ?? "none"})`,
    ...g.members.map((m) => `  ${m.id}  ${m.display_name}${m.id === g.owner ? "  (owner)" : ""}`),
  ].join("\n");

export const groupCommands: Record<string, Command> = {
  "group create": {
    usage: "group create <name> [member_id...]          a group you own, with these members",
    creates: true,
    async run(ctx) {
      const [name, ...members] = need(ctx, ["name"], "group create <name> [member_id...]");
      const g = await ctx.flock.createGroup({ name: name!, members }, ctx.keyed);
      ctx.print({ group: g }, () => `created ${groupText(g)}`);
    },
  },
  "group list": {
    usage: "group list                                    the groups you are in",
    async run(ctx) {
      const groups: { id: string; name: string; thread_id: string; updated_at: string }[] = [];
      await findThread(ctx, (t) => {
        if (t.kind === "group" && t.group) groups.push({ ...t.group, thread_id: t.id, updated_at: t.updated_at });
        return false;
      });
      ctx.print(
        groups,
        () => groups.map((g) => `${g.id}  ${g.name}  (last activity ${g.updated_at})`).join("\n") || "(no groups yet)",
      );
    },
  },
  "group show": {
    usage: "group show <group_id>                         its name, owner and members",
    async run(ctx) {
      const [id] = need(ctx, ["group_id"], "group show <group_id>");
      const g = await ctx.flock.group(id!);
      ctx.print({ group: g }, () => groupText(g));
    },
  },
  "group add": {
    usage: "group add <group_id> <member_id>...",
    async run(ctx) {
      const [id, ...members] = need(ctx, ["group_id", "member_id"], "group add <group_id> <member_id>...");
      const g = await ctx.flock.addGroupMembers(id!, members);
      ctx.print({ group: g }, () => `added ${members.join(", ")}\n${groupText(g)}`);
    },
  },
  "group remove": {
    usage: "group remove <group_id> <member_id>         (the owner removes anyone; a member removes itself)",
    async run(ctx) {
      const [id, member] = need(ctx, ["group_id", "member_id"], "group remove <group_id> <member_id>");
      await ctx.flock.removeGroupMember(id!, member!);
      ctx.print({ ok: true }, () => `removed ${member} from ${id}`);
    },
  },
  "group leave": {
    usage: "group leave <group_id>",
    async run(ctx) {
      const [id] = need(ctx, ["group_id"], "group leave <group_id>");
      await ctx.flock.removeGroupMember(id!, await myId(ctx));
      ctx.print({ ok: true }, () => `left ${id}`);
    },
  },
  "group send": {
    usage: "group send <group_id> <body> [--attach FILE_ID]... [--reply-to MESSAGE_ID]",
    flags: ["attach", "reply-to"],
    creates: true,
    async run(ctx) {
      const [id, body] = need(ctx, ["group_id", "body"], "group send <group_id> <body>");
      const extra = {
        ...(ctx.flags.attach ? { attachments: ctx.flags.attach } : {}),
        ...(ctx.flags["reply-to"] ? { reply_to: ctx.flags["reply-to"] } : {}),
      };
      const m = await ctx.flock.sendGroup(id!, body!, extra, ctx.keyed);
      ctx.print(m, () => `sent ${m.id} in ${m.thread_id}`);
    },
  },
};
