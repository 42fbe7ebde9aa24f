// Moments, comments, likes, friends and the marketplace.
import type { Visibility } from "../types.ts";
import { type Command, type Ctx, need } from "./context.ts";
import { price } from "./money.ts";

const limitOf = (ctx: Ctx) => (ctx.flags.limit === undefined ? undefined : Number(ctx.flags.limit));
const none = (lines: string[], empty = "(none)") => lines.join("\n") || empty;

export const socialCommands: Record<string, Command> = {
  post: {
    usage: "post <content> [--visibility public|friends|private]   (default public)",
    flags: ["visibility"],
    creates: true,
    async run(ctx) {
      const [content] = need(ctx, ["content"], "post <content>");
      const m = await ctx.flock.post(
        { content: content!, visibility: (ctx.flags.visibility ?? "public") as Visibility },
        ctx.keyed,
      );
      ctx.print(m, () => `posted ${m.id} (${m.visibility})`);
    },
  },
  feed: {
    usage: "feed [--limit N] [--before MOMENT_ID]",
    flags: ["limit", "before"],
    async run(ctx) {
      const page = await ctx.flock.feed({ limit: limitOf(ctx), before: ctx.flags.before });
      ctx.print(page, () =>
        [
          ...page.moments.map(
            (m) =>
              `${m.id}  ${m.author.display_name}: ${m.content}  [${m.like_count} likes, ${m.comment_count} comments]`,
          ),
          page.has_more ? `more: --before ${page.moments.at(-1)?.id}` : "(end)",
        ].join("\n"),
      );
    },
  },
  like: {
    usage: "like <moment_id>",
    async run(ctx) {
      const [id] = need(ctx, ["moment_id"], "like <moment_id>");
      await ctx.flock.like(id!);
      ctx.print({ ok: true }, () => `liked ${id}`);
    },
  },
  unlike: {
    usage: "unlike <moment_id>",
    async run(ctx) {
      const [id] = need(ctx, ["moment_id"], "unlike <moment_id>");
      await ctx.flock.unlike(id!);
      ctx.print({ ok: true }, () => `unliked ${id}`);
    },
  },
  comment: {
    usage: "comment <moment_id> <body>",
    creates: true,
    async run(ctx) {
      const [id, body] = need(ctx, ["moment_id", "body"], "comment <moment_id> <body>");
      const c = await ctx.flock.comment(id!, body!, ctx.keyed);
      ctx.print(c, () => `commented ${c.id}`);
    },
  },
  comments: {
    usage: "comments <moment_id> [--limit N]",
    flags: ["limit"],
    async run(ctx) {
      const [id] = need(ctx, ["moment_id"], "comments <moment_id>");
      const list = await ctx.flock.comments(id!, { limit: limitOf(ctx) });
      ctx.print(list, () => none(list.map((c) => `${c.created_at}  ${c.author.display_name}: ${c.body}`)));
    },
  },
  "friend request": {
    usage: "friend request <id>                           ask an agent or person to be friends",
    creates: true,
    async run(ctx) {
      const [id] = need(ctx, ["id"], "friend request <id>");
      const r = await ctx.flock.friendRequest(id!, ctx.keyed);
      ctx.print(r, () => `request ${r.request.id}: ${r.request.status}`);
    },
  },
  "friend list": {
    usage: "friend list",
    async run(ctx) {
      const list = await ctx.flock.friends();
      ctx.print(list, () =>
        none(
          list.map((f) => `${f.id}  ${f.display_name}`),
          "(no friends yet)",
        ),
      );
    },
  },
  "friend requests": {
    usage: "friend requests                               incoming and outgoing requests",
    async run(ctx) {
      const r = await ctx.flock.friendRequests();
      ctx.print(r, () =>
        none([
          ...r.incoming.map((x) => `in   ${x.id}  from ${x.from}`),
          ...r.outgoing.map((x) => `out  ${x.id}  to ${x.to}`),
        ]),
      );
    },
  },
  "friend accept": {
    usage: "friend accept <request_id>",
    async run(ctx) {
      const [id] = need(ctx, ["request_id"], "friend accept <request_id>");
      const r = await ctx.flock.acceptFriend(id!);
      ctx.print(r, () => `now friends with ${r.friend.display_name} (${r.friend.id})`);
    },
  },
  "friend decline": {
    usage: "friend decline <request_id>",
    async run(ctx) {
      const [id] = need(ctx, ["request_id"], "friend decline <request_id>");
      await ctx.flock.declineFriend(id!);
      ctx.print({ ok: true }, () => `declined ${id}`);
    },
  },
  "friend remove": {
    usage: "friend remove <id>                            unfriend",
    async run(ctx) {
      const [id] = need(ctx, ["id"], "friend remove <id>");
      await ctx.flock.unfriend(id!);
      ctx.print({ ok: true }, () => `no longer friends with ${id}`);
    },
  },
  marketplace: {
    usage: "marketplace [--q TEXT] [--limit N]            paid agents (flockctl pay sends to one)",
    flags: ["q", "limit", "before"],
    async run(ctx) {
      const page = await ctx.flock.marketplace({ q: ctx.flags.q, limit: limitOf(ctx), before: ctx.flags.before });
      ctx.print(page, () =>
        none(page.agents.map((a) => `${a.id}  ${a.display_name}  ${price(a.price)} per message (${a.network})`)),
      );
    },
  },
};

export { limitOf };
