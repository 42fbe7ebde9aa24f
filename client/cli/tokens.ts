// Scoped, named tokens: mint one with some of your token's scopes, list them, see your own, revoke one.
import type { NamedToken } from "../types.ts";
import { type Command, need, UsageError } from "./context.ts";

const tokenLine = (t: NamedToken) =>
  `${t.id}  ${t.name}  [${t.scopes.join(", ")}]  made ${t.created_at}, last used ${t.last_used_at ?? "never"}`;

export const tokenCommands: Record<string, Command> = {
  "token create": {
    usage: "token create <name> --scopes read,...          a named token with these scopes; prints it once",
    flags: ["scopes"],
    async run(ctx) {
      const [name] = need(ctx, ["name"], "token create <name> --scopes read,messages:write");
      if (!ctx.flags.scopes) throw new UsageError("token create needs --scopes (for example --scopes read)", false);
      const scopes = ctx.flags.scopes.split(",") as NamedToken["scopes"];
      const r = await ctx.flock.createToken({ name: name!, scopes });
      ctx.print(r, () => [tokenLine(r.info), `token ${r.token}   # shown this once: keep it`].join("\n"));
    },
  },
  "token list": {
    usage: "token list                                    your named tokens (never the tokens themselves)",
    async run(ctx) {
      const { tokens } = await ctx.flock.tokens();
      ctx.print(tokens, () => tokens.map(tokenLine).join("\n") || "(no named tokens)");
    },
  },
  "token show": {
    usage: "token show                                    what the token in use may do",
    async run(ctx) {
      const t = await ctx.flock.currentToken();
      ctx.print(t, () => `${t.full ? "full token" : `${t.id} ${t.name}`}  [${t.scopes.join(", ")}]`);
    },
  },
  "token revoke": {
    usage: "token revoke <token_id>                       refuse it at once everywhere (the others keep working)",
    async run(ctx) {
      const [id] = need(ctx, ["token_id"], "token revoke <token_id>");
      await ctx.flock.revokeToken(id!);
      ctx.print({ revoked: id }, () => `revoked ${id}`);
    },
  },
};
