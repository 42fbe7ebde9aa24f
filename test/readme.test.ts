// The README's API tour runs when pasted in order: its ```sh / ```bash blocks are taken from the file as it is and
// run one after another in one bash (so the variables one block sets reach the next) against a live node, with
// FLOCK pointing at it. curl fails on any 4xx/5xx and bash stops at the first failing command, so a block that
// uses a made-up id, a placeholder or a step that is not there fails here.
// (Every other shell block of both READMEs is run, or listed with what runs instead, by test/readme-shell.test.ts.)
import { spawn, spawnSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import t from "tap";
import { startTestNode } from "./helpers/node.ts";
import { fencedBlocks, ROOT, TOUR } from "./helpers/readme-blocks.ts";

const README = join(ROOT, "README.md");

/** The shell blocks (sh, bash, shell...) of one `## ` section of a Markdown file, in order. */
function shellBlocks(markdown: string, section: string): string[] {
  if (!markdown.split("\n").includes(`## ${section}`)) throw new Error(`no section "## ${section}"`);
  return fencedBlocks(markdown)
    .filter((b) => b.section === section && b.kind === "shell")
    .map((b) => b.code);
}

function bash(
  script: string,
  env: Record<string, string>,
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn("bash", ["-c", script], {
      env: { PATH: process.env["PATH"] ?? "", HOME: process.env["HOME"] ?? "/tmp", ...env },
    });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (d: Buffer) => (stdout += d.toString()));
    child.stderr.on("data", (d: Buffer) => (stderr += d.toString()));
    child.on("exit", (code) => resolve({ code, stdout, stderr }));
  });
}

t.test("the extraction finds the blocks it should", async (t) => {
  const md =
    "# x\n\n## API tour\n\n```sh\necho one\n```\n\ntext\n\n```ts\nnot shell\n```\n\n```bash\necho two\n```\n\n## Next\n\n```sh\necho three\n```\n";
  t.same(shellBlocks(md, "API tour"), ["echo one\n", "echo two\n"]);
  t.throws(() => shellBlocks(md, "Missing"));
});

// what a reader needs (.ci/run installs them); outside CI a machine without them skips, in CI it fails
const missing = ["bash", "curl", "jq"].filter((c) => spawnSync("bash", ["-c", `command -v ${c}`]).status !== 0);
const skip = missing.length > 0 && !process.env["CI"] ? `needs ${missing.join(", ")}` : false;

t.test("the API tour's shell blocks run in order against a live node", { skip }, async (t) => {
  const blocks = shellBlocks(readFileSync(README, "utf8"), TOUR);
  t.ok(blocks.length >= 3, `the tour has its shell blocks (${blocks.length})`);
  const node = await startTestNode(t, { engine: "memory" });
  // each block in turn, as if pasted: a marker before it, and the variables the tour promises checked at the end
  const script = [
    "set -eo pipefail",
    // the reader's curl shows a failure's body; here a failure also stops the run
    'curl() { command curl --fail-with-body --max-time 30 "$@"; }',
    ...blocks.map((b, i) => `echo "@@block ${i + 1}" >&2\n${b}`),
    'echo "@@vars TOKEN=$TOKEN TO=$TO GROUP=$GROUP"',
  ].join("\n");
  const r = await bash(script, { FLOCK: node.url });
  const reached = [...r.stderr.matchAll(/@@block (\d+)/g)].map((m) => m[1]).at(-1);
  const where =
    r.code === 0 ? "" : ` (stopped in block ${reached}):\n${blocks[Number(reached) - 1]}\n${r.stdout}\n${r.stderr}`;
  t.equal(r.code, 0, `every block exits 0${where}`);
  const vars = /@@vars TOKEN=(\S*) TO=(\S*) GROUP=(\S*)/.exec(r.stdout);
  t.ok(vars, "the run reached its end");
  t.match(vars?.[1], /^am_\w+$/, "TOKEN: the registered agent's token");
  t.match(vars?.[2], /^\d+$/, "TO: the id of the agent written to");
  t.match(vars?.[3], /^group_\d+$/, "GROUP: the group created");
  t.match(r.stdout, /"body":\s*"hello"/, "the direct message was sent (and Echo's ack of it answered 204)");
  t.match(r.stdout, /"body":\s*"all hands"/, "the group message was sent");
  const commands = blocks
    .join("\n")
    .split("\n")
    .filter((l) => !/^\s*#/.test(l));
  t.notMatch(commands.join("\n"), /…|\b\d{12,}\b/, "no placeholder or made-up id in what is run (comments aside)");
});
