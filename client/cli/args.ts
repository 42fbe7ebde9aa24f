// The flags of `flockctl`: one table of what each takes, and one wording per rule for a value that breaks it (a flag
// given no value, an empty one or a wrong one all read `--limit must be a whole number from 1 to 100 (got "...")`).
import { parseArgs } from "node:util";
import { isIdempotencyKey } from "../idempotency.ts";
import { suggest, UsageError } from "./context.ts";

const OPTIONS = {
  url: { type: "string" },
  token: { type: "string" },
  json: { type: "boolean" },
  verbose: { type: "boolean", short: "v" },
  help: { type: "boolean", short: "h" },
  version: { type: "boolean" },
  "idempotency-key": { type: "string" },
  description: { type: "string" },
  visibility: { type: "string" },
  limit: { type: "string" },
  before: { type: "string" },
  q: { type: "string" },
  ws: { type: "boolean" },
  save: { type: "boolean" },
  follow: { type: "boolean", short: "f" },
  undo: { type: "boolean" },
  name: { type: "string" },
  type: { type: "string" },
  out: { type: "string", short: "o" },
  attach: { type: "string", multiple: true },
  "reply-to": { type: "string" },
  avatar: { type: "string" },
  "accepts-messages-from": { type: "string" },
  "accepts-group-adds-from": { type: "string" },
  max: { type: "string" },
  direction: { type: "string" },
  scopes: { type: "string" },
  reason: { type: "string" },
  details: { type: "string" },
  after: { type: "string" },
  "remove-content": { type: "boolean" },
  mode: { type: "string" },
  events: { type: "string" },
  "offline-after": { type: "string" },
  "max-connections": { type: "string" },
} as const;

export type Flags = {
  [K in keyof typeof OPTIONS]?: (typeof OPTIONS)[K] extends { multiple: true }
    ? string[]
    : (typeof OPTIONS)[K]["type"] extends "boolean"
      ? boolean
      : string;
};

/** The flags every command takes (and --idempotency-key every command that creates something). */
export const GLOBAL_FLAGS = ["url", "token", "json", "verbose", "help", "version"];

const oneOf = (...values: string[]) => ({ rule: `one of ${values.join(", ")}`, ok: (v: string) => values.includes(v) });
const wholeNumber = (min: number, max: number) => ({
  rule: `a whole number from ${min} to ${max}`,
  ok: (v: string) => /^\d+$/.test(v) && +v >= min && +v <= max,
});
const nonEmpty = (what: string) => ({ rule: what, ok: (v: string) => v.length > 0 });

/** The rule of each string flag's value (checked before anything is sent). */
const RULES: Partial<Record<keyof typeof OPTIONS, { rule: string; ok: (v: string) => boolean }>> = {
  url: nonEmpty("the server's address, such as http://localhost:8080"),
  token: nonEmpty("a token (am_... or pt_...)"),
  "idempotency-key": { rule: "1 to 255 visible ASCII characters, no spaces", ok: isIdempotencyKey },
  visibility: oneOf("public", "friends", "private"),
  limit: wholeNumber(1, 100),
  before: nonEmpty("an id from the previous page"),
  q: nonEmpty("the text to search for"),
  name: nonEmpty("1 to 64 characters"),
  type: { rule: "a content type such as text/plain", ok: (v) => /^[\w.+-]+\/[\w.+-]+/.test(v) },
  out: nonEmpty("a file path, or - for stdout"),
  attach: nonEmpty("a file id (file_...) from flockctl upload"),
  avatar: nonEmpty("an image's path (PNG, JPEG, GIF or WebP, at most 1 MiB), or none"),
  "accepts-messages-from": oneOf("friends", "anyone"),
  "accepts-group-adds-from": oneOf("anyone", "friends", "nobody"),
  max: { rule: "an amount of US dollars above 0, such as 0.50", ok: (v) => /^\d*\.?\d+$/.test(v) && Number(v) > 0 },
  direction: oneOf("sent", "received"),
  scopes: {
    rule: "scopes separated by commas, of read, messages:write, moments:write, social:write, payments",
    ok: (v) => v.split(",").every((s) => /^(read|messages:write|moments:write|social:write|payments|admin)$/.test(s)),
  },
  reason: nonEmpty("why, 1 to 500 characters"),
  details: nonEmpty("what happened, at most 500 characters"),
  after: nonEmpty("an id from the previous page"),
  mode: oneOf("always", "when_offline"),
  events: {
    rule: "event types separated by commas, of message.created",
    ok: (v) => v.split(",").every((s) => s === "message.created"),
  },
  "offline-after": wholeNumber(5, 86_400),
  "max-connections": wholeNumber(1, 100),
};

const badValue = (flag: string, got: string | undefined) =>
  new UsageError(
    `--${flag} must be ${RULES[flag as keyof typeof OPTIONS]?.rule ?? "given a value"} (got ${got === undefined ? "nothing" : JSON.stringify(got)})`,
    false,
  );

export interface Parsed {
  flags: Flags;
  positionals: string[];
}

/** Parses the command line; a flag that is unknown or has a bad value is a UsageError in the one wording of its rule. */
export function parse(argv: string[]): Parsed {
  let parsed;
  try {
    parsed = parseArgs({ args: argv, allowPositionals: true, options: OPTIONS, strict: true });
  } catch (e) {
    const message = (e as Error).message;
    const missing = /^Option '(?:-\w, )?--([\w-]+) <value>' argument missing/.exec(message);
    if (missing) throw badValue(missing[1]!, undefined);
    // a value that starts with a dash (`--max -1`) reads as a flag: the same rule, quoting it
    const ambiguous = /^Option '(?:-\w, )?--([\w-]+)' argument is ambiguous/.exec(message);
    if (ambiguous) throw badValue(ambiguous[1]!, argv[argv.indexOf(`--${ambiguous[1]}`) + 1]);
    const unknown = /^Unknown option '(-{1,2}[^']+)'/.exec(message);
    if (unknown) {
      const flag = unknown[1]!;
      const guess = flag.startsWith("--") ? suggest(flag.slice(2), Object.keys(OPTIONS)) : undefined;
      throw new UsageError(`unknown flag ${flag}${guess ? `; did you mean --${guess}?` : ""}`);
    }
    throw new UsageError(message);
  }
  const flags = parsed.values as Flags;
  for (const [flag, value] of Object.entries(flags)) {
    const rule = RULES[flag as keyof typeof OPTIONS];
    if (!rule) continue;
    for (const v of Array.isArray(value) ? value : [value])
      if (typeof v === "string" && !rule.ok(v)) throw badValue(flag, v);
  }
  return { flags, positionals: parsed.positionals };
}

/** A flag that the command does not take: one wording, naming the commands that do. */
export function checkFlags(
  flags: Flags,
  cmd: string,
  allowed: readonly string[],
  takers: (flag: string) => string[],
): void {
  for (const flag of Object.keys(flags)) {
    if (GLOBAL_FLAGS.includes(flag) || allowed.includes(flag)) continue;
    throw new UsageError(`--${flag} goes with ${takers(flag).join(", ")}, not ${cmd}`, false);
  }
}
