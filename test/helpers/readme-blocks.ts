// The fenced code blocks of a Markdown file, for the tests that run the READMEs' examples (test/readme.test.ts: the
// API tour's shell blocks; test/readme-js.test.ts: every JS and TS block; test/readme-shell.test.ts: every other
// shell block, and the check that no block of a runnable language escapes all three).
import { readFileSync } from "node:fs";
import { resolve } from "node:path";

export const ROOT = resolve(import.meta.dirname, "../..");
/** The READMEs whose examples run in CI. */
export const READMES = ["README.md", "client/README.md"] as const;

/** What a block's language tag makes of it: shell, JS, TS, another language (data such as json or ini), or none given. */
export type Kind = "shell" | "js" | "ts" | "other" | "untagged";

const KINDS: Record<string, Kind> = {
  sh: "shell",
  bash: "shell",
  shell: "shell",
  console: "shell",
  zsh: "shell",
  "shell-session": "shell",
  js: "js",
  javascript: "js",
  mjs: "js",
  cjs: "js",
  jsx: "js",
  ts: "ts",
  typescript: "ts",
  mts: "ts",
  cts: "ts",
  tsx: "ts",
};

export interface Block {
  /** The Markdown file, relative to the repository's root. */
  file: string;
  kind: Kind;
  /** The language tag as written (`sh`, `ts`...), "" when none. */
  tag: string;
  /** The rest of the info string after the tag (`skip-run`). */
  info: string;
  code: string;
  /** 1-based line of the opening fence. */
  line: number;
  /** The `## ` section the block is in ("" before the first). */
  section: string;
}

/** Every fenced block (``` or ~~~, any length of fence) of a Markdown text, in order. */
export function fencedBlocks(markdown: string, file = ""): Block[] {
  const out: Block[] = [];
  const lines = markdown.split("\n");
  let section = "";
  for (let i = 0; i < lines.length; i++) {
    const heading = /^## (.+?)\s*$/.exec(lines[i]!);
    if (heading) section = heading[1]!;
    const open = /^ {0,3}(`{3,}|~{3,})\s*([^\s`]*)(.*)$/.exec(lines[i]!);
    if (!open) continue;
    const fence = open[1]!;
    const closing = new RegExp(`^ {0,3}${fence[0] === "`" ? "`" : "~"}{${fence.length},}\\s*$`);
    let j = i + 1;
    while (j < lines.length && !closing.test(lines[j]!)) j++;
    const tag = open[2]!.toLowerCase();
    out.push({
      file,
      kind: tag === "" ? "untagged" : (KINDS[tag] ?? "other"),
      tag,
      info: open[3]!.trim(),
      code: lines
        .slice(i + 1, j)
        .map((l) => `${l}\n`)
        .join(""),
      line: i + 1,
      section,
    });
    i = j;
  }
  return out;
}

/** The fenced blocks of one of the READMEs. */
export const readmeBlocks = (file: string): Block[] => fencedBlocks(readFileSync(resolve(ROOT, file), "utf8"), file);

/** The section of README.md whose shell blocks test/readme.test.ts runs, in order, in one shell. */
export const TOUR = "API tour";

/** A shell block's commands without comments and with spaces collapsed: how PLANS names it, and how two are compared. */
export const commands = (code: string) =>
  code
    .split("\n")
    .map((l) =>
      l
        .replace(/(^|\s)#.*$/, "")
        .replace(/\s+/g, " ")
        .trim(),
    )
    .filter(Boolean);
export const keyOf = (b: Block) => `${b.file}: ${commands(b.code)[0] ?? ""}`;

/** The shell block of the READMEs whose key (keyOf) is `key`. */
export function shellBlock(key: string): Block {
  const b = READMES.flatMap((f) => readmeBlocks(f)).find((x) => x.kind === "shell" && keyOf(x) === key);
  if (!b) throw new Error(`no shell block "${key}"`);
  return b;
}
