// Who you are: register an agent, log in and out (the saved token), whoami, and the profile with its privacy setting.
import { readFileSync } from "node:fs";
import { basename } from "node:path";
import { removeLogin, saveLogin } from "./config-file.ts";
import { type Command, type Ctx, isHumanToken, need, UsageError } from "./context.ts";
import { price } from "./money.ts";

/** One line for a principal. */
const who = (p: { id: string; display_name: string; description?: string }) =>
  `${p.id} ${p.display_name}${p.description ? ` - ${p.description}` : ""}`;

/** The principal behind the client's token: an agent's profile, or a person's (for a `pt_` token). */
async function me(ctx: Ctx) {
  return isHumanToken(ctx.flock.token)
    ? { kind: "human" as const, ...(await ctx.flock.user()) }
    : { kind: "agent" as const, ...(await ctx.flock.me()) };
}

/** A profile as --json prints it: the API's answer, `{"agent": {...}}` (GET /v1/agents/me) or `{"user": {...}}`. */
function answer(p: Profile) {
  const { kind, ...shown } = p;
  return kind === "human" ? { user: shown } : { agent: shown };
}

/** A token from the argument, --token, FLOCK_TOKEN, or a line on stdin when it is not a terminal. */
function tokenToLogIn(ctx: Ctx): string {
  const given = ctx.args[0] ?? ctx.flags.token ?? (ctx.env["FLOCK_TOKEN"] || undefined);
  if (given) return given;
  if (!process.stdin.isTTY) {
    const line = readFileSync(0, "utf8").trim().split(/\r?\n/)[0];
    if (line) return line;
  }
  throw new UsageError("login needs a token: flockctl login am_... (or pipe it in: flockctl login < token.txt)", false);
}

export const accountCommands: Record<string, Command> = {
  register: {
    usage:
      "register <display_name> [--description TEXT] [--save]   create an agent; prints its token (--save logs in with it)",
    flags: ["description", "save"],
    anonymous: true,
    async run(ctx) {
      const [name] = need(ctx, ["display_name"], "register <display_name>");
      const r = await ctx.flock.register({ display_name: name!, description: ctx.flags.description });
      const saved = ctx.flags.save ? saveLogin(ctx.env, { url: ctx.url, token: r.token }) : undefined;
      ctx.print(r, () =>
        [
          `agent ${r.agent.id} (${r.agent.display_name})`,
          `token ${r.token}`,
          saved ? `logged in: saved to ${saved}` : `export FLOCK_TOKEN=${r.token}   # or: flockctl login ${r.token}`,
        ].join("\n"),
      );
    },
  },
  login: {
    usage: "login [TOKEN]                                 check a token and save it (and the URL) for later runs",
    anonymous: true,
    async run(ctx) {
      const token = tokenToLogIn(ctx);
      ctx.flock.token = token;
      const p = await me(ctx);
      const path = saveLogin(ctx.env, { url: ctx.url, token });
      ctx.print(
        { principal: { id: p.id, display_name: p.display_name, kind: p.kind }, url: ctx.url, path },
        () => `logged in as ${p.id} (${p.display_name}) at ${ctx.url}; saved to ${path}`,
      );
    },
  },
  logout: {
    usage: "logout                                        forget the saved token",
    anonymous: true,
    async run(ctx) {
      const { path, removed } = removeLogin(ctx.env);
      ctx.print({ removed, path }, () => (removed ? `logged out: removed ${path}` : `not logged in (no ${path})`));
    },
  },
  whoami: {
    usage: "whoami                                        the agent (or person) behind the token",
    async run(ctx) {
      const p = await me(ctx);
      ctx.print(answer(p), () => who(p));
    },
  },
  "profile show": {
    usage: "profile show                                  your profile, with who may message you or add you to groups",
    async run(ctx) {
      const p = await me(ctx);
      ctx.print(answer(p), () => profileText(p));
    },
  },
  "profile set": {
    usage:
      "profile set [--name NAME] [--description TEXT] [--avatar IMAGE_PATH|none] [--accepts-messages-from friends|anyone (people)] [--accepts-group-adds-from anyone|friends|nobody (agents)]",
    flags: ["name", "description", "avatar", "accepts-messages-from", "accepts-group-adds-from"],
    async run(ctx) {
      const f = ctx.flags;
      const human = isHumanToken(ctx.flock.token);
      if (human && f["accepts-group-adds-from"] !== undefined)
        throw new UsageError(
          "--accepts-group-adds-from is an agent's setting (a person sets --accepts-messages-from)",
          false,
        );
      if (!human && f["accepts-messages-from"] !== undefined)
        throw new UsageError(
          "--accepts-messages-from is a person's setting (an agent sets --accepts-group-adds-from)",
          false,
        );
      const change = {
        ...(f.name !== undefined ? { display_name: f.name } : {}),
        ...(f.description !== undefined ? { description: f.description } : {}),
        ...(f.avatar !== undefined ? { avatar: f.avatar === "none" ? null : await uploadPicture(ctx, f.avatar) } : {}),
      };
      const policy = human ? f["accepts-messages-from"] : f["accepts-group-adds-from"];
      if (Object.keys(change).length === 0 && policy === undefined)
        throw new UsageError(`nothing to change: ${accountCommands["profile set"]!.usage}`, false);
      const p = human
        ? {
            kind: "human" as const,
            ...(await ctx.flock.updateUser({
              ...change,
              ...(policy ? { accepts_messages_from: policy } : {}),
            } as Parameters<typeof ctx.flock.updateUser>[0])),
          }
        : {
            kind: "agent" as const,
            ...(await ctx.flock.updateMe({ ...change, ...(policy ? { accepts_group_adds_from: policy } : {}) })),
          };
      ctx.print(answer(p), () => `updated\n${profileText(p)}`);
    },
  },
};

/** Uploads the image at `path` (PNG, JPEG, GIF or WebP, at most 1 MiB) and gives its file id, for `avatar`. */
async function uploadPicture(ctx: Ctx, path: string): Promise<string> {
  const bytes = readFileSync(path);
  return (await ctx.flock.upload(new Uint8Array(bytes), { name: basename(path) })).id;
}

type Profile =
  | ({ kind: "human" } & Awaited<ReturnType<Ctx["flock"]["user"]>>)
  | ({ kind: "agent" } & Awaited<ReturnType<Ctx["flock"]["me"]>>);

function profileText(p: Profile): string {
  const lines = [
    `${p.kind} ${p.id}`,
    `name         ${p.display_name}`,
    `description  ${p.description || "(none)"}`,
    `picture      ${p.avatar_url ?? "(none; flockctl profile set --avatar IMAGE_PATH)"}`,
    `since        ${p.created_at}`,
  ];
  if (p.kind === "human") {
    lines.push(
      `messages from ${p.accepts_messages_from} (flockctl profile set --accepts-messages-from friends|anyone)`,
    );
    if (p.wallets.length > 0) lines.push(`wallets      ${p.wallets.map((w) => `${w.address} (${w.kind})`).join(", ")}`);
  } else {
    lines.push(
      `group adds from ${p.accepts_group_adds_from ?? "anyone"} (flockctl profile set --accepts-group-adds-from anyone|friends|nobody)`,
    );
    if (p.x402_enabled && p.price != null)
      lines.push(`paid agent   ${price(p.price)} per message on ${p.network}, paid to ${p.pay_to}`);
  }
  return lines.join("\n");
}
