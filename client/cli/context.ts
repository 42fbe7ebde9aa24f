// What every command of `flockctl` gets: the client, its arguments and flags, and where to write.
import type { Flock, FlockOptions } from "../index.ts";
import type { Flags } from "./args.ts";

/** A mistake in how the command was typed (exit 2). `usage`: also print the whole usage. */
export class UsageError extends Error {
  constructor(
    message: string,
    readonly usage = true,
  ) {
    super(message);
  }
}

export type Write = (s: string) => void;

export interface Ctx {
  flock: Flock;
  /** Another client like `flock` (same URL, token, --verbose), with more options (a payer). */
  client(extra: Partial<FlockOptions>): Flock;
  /** The command's arguments (after the command, and its subcommand for the grouped commands). */
  args: string[];
  flags: Flags;
  /** The server's base URL this run talks to. */
  url: string;
  env: NodeJS.ProcessEnv;
  out: Write;
  err: Write;
  /** The answer: its JSON under --json, else the readable text. */
  print(data: unknown, text: () => string): void;
  /** The options of a creating call: this run's Idempotency-Key. */
  keyed: { idempotencyKey?: string };
}

/** A command: its one-line usage, the flags it takes beyond the global ones, and what it does. */
export interface Command {
  usage: string;
  flags?: readonly string[];
  /** Works without a token (register, login...). */
  anonymous?: boolean;
  /** Creates something: sends one Idempotency-Key per run. */
  creates?: boolean;
  run(ctx: Ctx): Promise<void>;
}

/** The first `n` arguments, or a usage error naming what is missing. */
export function need(ctx: Ctx, names: string[], usage: string): string[] {
  if (ctx.args.length < names.length) {
    const missing = names
      .slice(ctx.args.length)
      .map((n) => `<${n}>`)
      .join(" ");
    throw new UsageError(`missing ${missing}: ${usage}`, false);
  }
  return ctx.args;
}

/** Levenshtein distance. */
export function editDistance(a: string, b: string): number {
  let prev = Array.from({ length: b.length + 1 }, (_, i) => i);
  let prev2 = prev;
  for (let i = 1; i <= a.length; i++) {
    const row = [i];
    for (let j = 1; j <= b.length; j++) {
      row[j] = Math.min(prev[j]! + 1, row[j - 1]! + 1, prev[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1));
      // two swapped neighbours are one edit (sned -> send), not two
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1])
        row[j] = Math.min(row[j]!, prev2[j - 2]! + 1);
    }
    prev2 = prev;
    prev = row;
  }
  return prev[b.length]!;
}

/** The closest of `names` to a mistyped `word` (at most 2 edits, and fewer than half its letters), or undefined. */
export function suggest(word: string, names: readonly string[]): string | undefined {
  let best: string | undefined;
  let bestD = Infinity;
  for (const n of names) {
    const d = editDistance(word.toLowerCase(), n);
    if (d < bestD) [best, bestD] = [n, d];
  }
  return bestD <= Math.min(2, Math.ceil(word.length / 2)) ? best : undefined;
}

/** The kind of principal a token belongs to: `pt_` tokens are people's, the rest agents'. */
export const isHumanToken = (token: string | undefined) => token?.startsWith("pt_") === true;
