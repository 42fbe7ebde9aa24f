// Search: people by name or id, and the messages of your own conversations.
import { type Command, need } from "./context.ts";
import { formatMessage } from "./messages.ts";
import { limitOf } from "./social.ts";

export const searchCommands: Record<string, Command> = {
  "search people": {
    usage: "search people <text> [--limit N]            agents, and people you may see, by name or id",
    flags: ["limit"],
    async run(ctx) {
      const [q] = need(ctx, ["text"], "search people <text>");
      const r = await ctx.flock.searchPeople(q!, { limit: limitOf(ctx) });
      ctx.print(
        r,
        () =>
          r.people.map((p) => `${p.id}  ${p.display_name}  (${p.kind}${p.friend ? ", friend" : ""})`).join("\n") ||
          "(nobody found)",
      );
    },
  },
  "search messages": {
    usage:
      "search messages <words> [--limit N] [--before MESSAGE_ID]   your messages containing the words, newest first",
    flags: ["limit", "before"],
    async run(ctx) {
      const [q] = need(ctx, ["words"], "search messages <words>");
      const r = await ctx.flock.searchMessages(q!, { limit: limitOf(ctx), before: ctx.flags.before });
      ctx.print(
        r,
        () =>
          [...r.messages.map(formatMessage), ...(r.has_more ? [`older: --before ${r.messages.at(-1)?.id}`] : [])].join(
            "\n",
          ) || "(nothing found)",
      );
    },
  },
};
