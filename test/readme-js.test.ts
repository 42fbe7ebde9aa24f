// Every fenced JavaScript and TypeScript block of README.md and client/README.md runs, as it is, against a live node:
// each block is written to its own module (test-output/readme-js/, inside the repository so that `@flock/client`
// resolves to the built workspace package and its optional peers are there) and run with node and tsx, one after
// another, with `http://localhost:8080` standing for the node's address, and type-checked under strict (checkJs for
// the JS ones). A block that must not run says so in its info string (```ts skip-run); there are at most a few.
import { execFile } from "node:child_process";
import { mkdir, readFile, rm, writeFile } from "node:fs/promises";
import { join, resolve } from "node:path";
import { promisify } from "node:util";
import t from "tap";
import { startTestNode } from "./helpers/node.ts";

const run = promisify(execFile);
const ROOT = resolve(import.meta.dirname, "..");
const READMES = ["README.md", "client/README.md"];

export interface CodeBlock {
  lang: "js" | "ts";
  info: string;
  code: string;
  /** 1-based line of the opening fence. */
  line: number;
}

/** The fenced JS and TS blocks of a Markdown file, in order, with their info strings. */
export function codeBlocks(markdown: string): CodeBlock[] {
  const out: CodeBlock[] = [];
  for (const m of markdown.matchAll(/^```(js|javascript|mjs|ts|typescript|mts)\b([^\n]*)\n([\s\S]*?)^```[ \t]*$/gm)) {
    const lang = /^(ts|typescript|mts)$/.test(m[1]!) ? "ts" : "js";
    out.push({ lang, info: m[2]!.trim(), code: m[3]!, line: markdown.slice(0, m.index).split("\n").length });
  }
  return out;
}

const skipped = (b: CodeBlock) => /\bskip-run\b/.test(b.info);

t.test("the extraction finds the blocks it should", async (t) => {
  const md = "# x\n\n```js\nconsole.log(1)\n```\n\n```sh\necho no\n```\n\n```ts skip-run\nnot run\n```\n\n```typescript\nlet a: number = 1\n```\n";
  const blocks = codeBlocks(md);
  t.same(blocks.map((b) => [b.lang, b.info, b.line]), [["js", "", 3], ["ts", "skip-run", 11], ["ts", "", 15]]);
  t.same(blocks.filter((b) => !skipped(b)).map((b) => b.code), ["console.log(1)\n", "let a: number = 1\n"]);
});

t.test("every JS and TS block of both READMEs runs against a live node", async (t) => {
  const node = await startTestNode(t, { engine: "memory", env: { FLOCK_LIMITS_SCALE: "20" } });
  const dir = join(ROOT, "test-output", "readme-js");
  await rm(dir, { recursive: true, force: true });
  await mkdir(dir, { recursive: true });
  let ran = 0;
  let skips = 0;
  for (const file of READMES) {
    const blocks = codeBlocks(await readFile(join(ROOT, file), "utf8"));
    t.ok(blocks.length > 0, `${file} has JS/TS blocks`);
    for (const [i, b] of blocks.entries()) {
      if (skipped(b)) {
        skips++;
        continue;
      }
      const name = `${file.replace(/\W+/g, "-")}-${i + 1}.${b.lang === "ts" ? "mts" : "mjs"}`;
      await writeFile(join(dir, name), b.code.replaceAll("http://localhost:8080", node.url));
      const r = await run(process.execPath, ["--import", "tsx", join(dir, name)], {
        cwd: ROOT,
        timeout: 60_000,
        env: { PATH: process.env["PATH"] ?? "", HOME: process.env["HOME"] ?? "/tmp", FLOCK_URL: node.url },
      }).then(
        (x) => ({ code: 0, out: x.stdout + x.stderr }),
        (e: { code?: number; stdout?: string; stderr?: string; message: string }) => ({ code: e.code ?? 1, out: `${e.stdout ?? ""}${e.stderr ?? e.message}` }),
      );
      t.equal(r.code, 0, `${file}:${b.line} (${b.lang}) runs${r.code === 0 ? "" : `:\n${b.code}\n${r.out}`}`);
      ran++;
    }
  }
  // and they type-check as a reader's strict project would (the JS blocks too, with checkJs)
  await writeFile(
    join(dir, "tsconfig.json"),
    JSON.stringify({
      compilerOptions: { strict: true, module: "nodenext", moduleResolution: "nodenext", target: "es2022", noEmit: true, skipLibCheck: true, types: ["node"], allowJs: true, checkJs: true },
      include: ["*.mts", "*.mjs"],
    }),
  );
  const tsc = await run(process.execPath, [join(ROOT, "node_modules/typescript/bin/tsc"), "-p", dir], { cwd: dir, timeout: 120_000 }).then(
    () => "",
    (e: { stdout?: string; message: string }) => e.stdout || e.message,
  );
  t.equal(tsc, "", "the blocks type-check");
  t.ok(ran >= 6, `${ran} blocks ran`);
  t.ok(skips <= 2, `at most a few blocks are marked skip-run (${skips})`);
});
