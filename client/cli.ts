// `npx flockctl <command>`: the SDK from a shell. Readable output by default, `--json` for scripts. The answer alone goes
// to stdout; errors, usage and `--verbose`'s lines (each request, and each retry with its wait) go to stderr.
// The commands live in cli/ by subject; this file parses, finds the settings (flags, environment, the saved login)
// and runs one. Exit codes: 0 ok, 2 usage, 3 unauthorized, 4 not found, 5 rate limited, 6 payment required,
// 7 invalid request, 1 anything else.
import { newIdempotencyKey } from "./idempotency.ts";
import { Flock, type FlockOptions } from "./index.ts";
import { accountCommands } from "./cli/account.ts";
import { checkFlags, type Flags, parse } from "./cli/args.ts";
import { readLogin, type SavedLogin } from "./cli/config-file.ts";
import { type Command, suggest, UsageError, type Write } from "./cli/context.ts";
import { fileCommands } from "./cli/files.ts";
import { groupCommands } from "./cli/groups.ts";
import { messageCommands } from "./cli/messages.ts";
import { moderationCommands } from "./cli/moderation.ts";
import { searchCommands } from "./cli/search.ts";
import { payCommands } from "./cli/pay.ts";
import { checkUrl, NO_TOKEN_HINT, report, SetupError } from "./cli/report.ts";
import { socialCommands } from "./cli/social.ts";
import { tokenCommands } from "./cli/tokens.ts";
import { required, synopsis, usageText } from "./cli/usage.ts";
import { verbose } from "./cli/verbose.ts";
import { webhookCommands } from "./cli/webhooks.ts";
import { version } from "./cli/version.ts";

const SECTIONS: [string, Record<string, Command>][] = [
  ["account", accountCommands],
  ["tokens", tokenCommands],
  ["moments and friends", socialCommands],
  ["messages", messageCommands],
  ["search", searchCommands],
  ["groups", groupCommands],
  ["files", fileCommands],
  ["payments", payCommands],
  ["webhooks (agents)", webhookCommands],
  ["reports and moderation", moderationCommands],
];
const COMMANDS: Record<string, Command> = Object.assign({}, ...SECTIONS.map(([, c]) => c));
/** The commands with subcommands (`group create`...), and the subcommand run when none is given. */
const GROUPS = new Set(
  Object.keys(COMMANDS)
    .filter((k) => k.includes(" "))
    .map((k) => k.split(" ")[0]!),
);
const DEFAULT_SUB: Record<string, string> = { profile: "show" };
const ALIASES: Record<string, string> = { "friend unfriend": "friend remove" };

export const USAGE = usageText(SECTIONS);

/** Which command the words name (with its arguments), or a UsageError with a suggestion for a typo. */
function resolve(words: string[]): { name: string; cmd: Command; args: string[] } {
  const [first, second] = words as [string, string | undefined];
  if (GROUPS.has(first)) {
    const sub = second ?? DEFAULT_SUB[first];
    const subs = Object.keys(COMMANDS)
      .filter((k) => k.startsWith(`${first} `))
      .map((k) => k.slice(first.length + 1));
    if (sub === undefined) throw new UsageError(`${first} needs a subcommand: ${subs.join(", ")}`, false);
    const name = ALIASES[`${first} ${sub}`] ?? `${first} ${sub}`;
    const cmd = COMMANDS[name];
    if (!cmd) {
      const guess = suggest(sub, subs);
      throw new UsageError(
        `unknown command "${first} ${sub}"${guess ? `; did you mean "${first} ${guess}"?` : ` (${first} takes ${subs.join(", ")})`}`,
        false,
      );
    }
    return { name, cmd, args: words.slice(second === undefined ? 1 : 2) };
  }
  const cmd = Object.hasOwn(COMMANDS, first) ? COMMANDS[first] : undefined;
  if (!cmd) {
    const guess = suggest(first, [...Object.keys(COMMANDS).filter((k) => !k.includes(" ")), ...GROUPS, "mcp"]);
    throw new UsageError(`unknown command "${first}"${guess ? `; did you mean "${guess}"?` : ""}`, guess === undefined);
  }
  return { name: first, cmd, args: words.slice(1) };
}

/** The commands that take a flag (for "--limit goes with feed, threads..., not whoami"). */
function takers(flag: string): string[] {
  return Object.entries(COMMANDS)
    .filter(([, c]) => (flag === "idempotency-key" ? c.creates : c.flags?.includes(flag)))
    .map(([name]) => name);
}

export async function main(
  argv: string[],
  out: Write = (s) => process.stdout.write(`${s}\n`),
  err: Write = (s) => process.stderr.write(`${s}\n`),
  env: NodeJS.ProcessEnv = process.env,
): Promise<number> {
  // the MCP server owns stdout (the protocol) and its own flags
  if (argv[0] === "mcp") return runMcpCommand(argv.slice(1));
  let flags: Flags = {};
  let url = "";
  let idempotencyKey: string | undefined;
  let flock: Flock | undefined;
  let tokenFrom: string | undefined;
  try {
    const parsed = parse(argv);
    flags = parsed.flags;
    if (flags.version) {
      out(version());
      return 0;
    }
    if (flags.help) {
      out(USAGE);
      return 0;
    }
    if (parsed.positionals.length === 0) throw new UsageError("no command given");
    const { name, cmd, args } = resolve(parsed.positionals);
    checkFlags(flags, name, [...(cmd.flags ?? []), ...(cmd.creates ? ["idempotency-key"] : [])], takers);
    const missing = required(cmd).slice(args.length);
    if (missing.length > 0)
      throw new UsageError(`missing ${missing.join(" ")}\nusage: flockctl ${synopsis(cmd)}`, false);

    // settings: flags, then the environment, then the saved login
    let saved: SavedLogin | undefined;
    const login = () => (saved ??= readLogin(env, err) ?? {});
    const envUrl = env["FLOCK_URL"] || undefined;
    const [given, from] =
      flags.url !== undefined
        ? [flags.url, "--url"]
        : envUrl
          ? [envUrl, "FLOCK_URL"]
          : login().url
            ? [login().url!, "the saved login's URL"]
            : ["http://localhost:8080", "the default URL"];
    url = checkUrl(given, from);
    const token = flags.token ?? (env["FLOCK_TOKEN"] || undefined) ?? (name === "login" ? undefined : login().token);
    tokenFrom =
      name === "login"
        ? "the token given to login"
        : flags.token !== undefined
          ? "--token"
          : env["FLOCK_TOKEN"]
            ? "FLOCK_TOKEN"
            : "the saved login";
    if (!token && !cmd.anonymous)
      throw new SetupError(`no token: ${name} acts as an agent or person`, NO_TOKEN_HINT, 3);

    const options: FlockOptions = { baseUrl: url, token, ...(flags.verbose ? verbose(err) : {}) };
    flock = new Flock(options);
    // the commands that create something send one Idempotency-Key per run (the same on each of the SDK's retries)
    idempotencyKey = cmd.creates ? (flags["idempotency-key"] ?? newIdempotencyKey()) : undefined;
    if (idempotencyKey && flags.verbose) err(`flockctl: Idempotency-Key ${idempotencyKey}`);
    const client = flock;
    await cmd.run({
      flock: client,
      client: (extra) => new Flock({ ...options, token: client.token, ...extra }),
      args,
      flags,
      url,
      env,
      out,
      err,
      print: (data, text) => out(flags.json ? JSON.stringify(data) : text()),
      keyed: { idempotencyKey },
    });
    return 0;
  } catch (e) {
    const token = flock?.token ? { token: flock.token, from: tokenFrom ?? "the token" } : undefined;
    return report(e, err, { json: flags.json, url, usage: USAGE, idempotencyKey, token });
  }
}

/** `flockctl mcp`: the MCP server needs @modelcontextprotocol/sdk and zod, optional peers a plain SDK user never installs. */
async function runMcpCommand(args: string[]): Promise<number> {
  let mod: typeof import("./mcp/stdio.ts");
  try {
    mod = await import("./mcp/stdio.ts");
  } catch (err) {
    if ((err as { code?: string }).code !== "ERR_MODULE_NOT_FOUND") throw err;
    process.stderr.write(
      "flockctl mcp needs the MCP SDK beside @flock/client: npm install @modelcontextprotocol/sdk zod\n",
    );
    return 1;
  }
  return mod.runMcp(args);
}
