// Every fenced JavaScript and TypeScript block of README.md and client/README.md runs, as it is, against a live node:
// each block is written to its own module in a fresh temporary folder (a reader's project: its node_modules is a
// link to the repository's, so `@flock/client` is the built workspace package and its optional peers are there) and
// run with node and tsx, one after another, with `http://localhost:8080` standing for the node's address, and
// type-checked under strict (checkJs for the JS ones). A block that must not run says so in its info string
// (```ts skip-run); there are at most a few. The folder is removed afterwards.
import { execFile } from "node:child_process";
import { mkdtemp, rm, symlink, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import t from "tap";
import { type Block, fencedBlocks, READMES, readmeBlocks, ROOT } from "./helpers/readme-blocks.ts";
import { startTestNode } from "./helpers/node.ts";

const run = promisify(execFile);

export interface CodeBlock {
  lang: "js" | "ts";
  info: string;
  code: string;
  /** 1-based line of the opening fence. */
  line: number;
}

const asCode = (b: Block): CodeBlock => ({
  lang: b.kind === "ts" ? "ts" : "js",
  info: b.info,
  code: b.code,
  line: b.line,
});

/** The fenced JS and TS blocks of a Markdown file (every tag of either: js, mjs, cjs, ts, typescript...), in order. */
export function codeBlocks(markdown: string): CodeBlock[] {
  return fencedBlocks(markdown)
    .filter((b) => b.kind === "js" || b.kind === "ts")
    .map(asCode);
}

const skipped = (b: CodeBlock) => /\bskip-run\b/.test(b.info);

t.test("the extraction finds the blocks it should", async (t) => {
  const md =
    "# x\n\n```js\nconsole.log(1)\n```\n\n```sh\necho no\n```\n\n```ts skip-run\nnot run\n```\n\n```typescript\nlet a: number = 1\n```\n";
  const blocks = codeBlocks(md);
  t.same(
    blocks.map((b) => [b.lang, b.info, b.line]),
    [
      ["js", "", 3],
      ["ts", "skip-run", 11],
      ["ts", "", 15],
    ],
  );
  t.same(
    blocks.filter((b) => !skipped(b)).map((b) => b.code),
    ["console.log(1)\n", "let a: number = 1\n"],
  );
});

t.test("every JS and TS block of both READMEs runs against a live node", async (t) => {
  // endpoints on this machine allowed, as the webhooks example says to start its node
  const node = await startTestNode(t, {
    engine: "memory",
    env: { FLOCK_LIMITS_SCALE: "20", FLOCK_WEBHOOK_ALLOW_PRIVATE: "1" },
  });
  const dir = await mkdtemp(join(tmpdir(), "flock-readme-js-"));
  t.teardown(() => rm(dir, { recursive: true, force: true }));
  // the reader's project has the package installed: node, tsx and tsc resolve `@flock/client` (the workspace's link to
  // client/), its optional peers and @types/node through this link
  await symlink(join(ROOT, "node_modules"), join(dir, "node_modules"), "dir");
  let ran = 0;
  let skips = 0;
  for (const file of READMES) {
    const blocks = readmeBlocks(file)
      .filter((b) => b.kind === "js" || b.kind === "ts")
      .map(asCode);
    t.ok(blocks.length > 0, `${file} has JS/TS blocks`);
    for (const [i, b] of blocks.entries()) {
      if (skipped(b)) {
        skips++;
        continue;
      }
      const name = `${file.replace(/\W+/g, "-")}-${i + 1}.${b.lang === "ts" ? "mts" : "mjs"}`;
      await writeFile(join(dir, name), b.code.replaceAll("http://localhost:8080", node.url));
      const r = await run(process.execPath, ["--import", "tsx", join(dir, name)], {
        cwd: dir,
        timeout: 60_000,
        env: { PATH: process.env["PATH"] ?? "", HOME: process.env["HOME"] ?? "/tmp", FLOCK_URL: node.url },
      }).then(
        (x) => ({ code: 0, out: x.stdout + x.stderr }),
        (e: { code?: number; stdout?: string; stderr?: string; message: string }) => ({
          code: e.code ?? 1,
          out: `${e.stdout ?? ""}${e.stderr ?? e.message}`,
        }),
      );
      t.equal(r.code, 0, `${file}:${b.line} (${b.lang}) runs${r.code === 0 ? "" : `:\n${b.code}\n${r.out}`}`);
      ran++;
    }
  }
  // and they type-check as a reader's strict project would (the JS blocks too, with checkJs)
  await writeFile(
    join(dir, "tsconfig.json"),
    JSON.stringify({
      compilerOptions: {
        strict: true,
        module: "nodenext",
        moduleResolution: "nodenext",
        target: "es2022",
        noEmit: true,
        skipLibCheck: true,
        types: ["node"],
        allowJs: true,
        checkJs: true,
      },
      include: ["*.mts", "*.mjs"],
    }),
  );
  const tsc = await run(process.execPath, [join(ROOT, "node_modules/typescript/bin/tsc"), "-p", dir], {
    cwd: dir,
    timeout: 120_000,
  }).then(
    () => "",
    (e: { stdout?: string; message: string }) => e.stdout || e.message,
  );
  t.equal(tsc, "", "the blocks type-check");
  t.ok(ran >= 6, `${ran} blocks ran`);
  t.ok(skips <= 2, `at most a few blocks are marked skip-run (${skips})`);
});
