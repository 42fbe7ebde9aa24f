// The README's MCP desktop configuration as written, from an empty folder on a machine where util-linux's `flock`
// is on PATH: its install block runs as pasted (with npm's global prefix in a temp folder), then the official MCP
// client spawns the configuration's command, in an empty working directory, against a live node.
import { spawn, spawnSync } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import t from "tap";
import { registerAgent } from "./helpers/http.ts";
import { ensureClientBuilt } from "./helpers/mcp.ts";
import { startTestNode } from "./helpers/node.ts";
import { npmEnv } from "./helpers/npm-env.ts";

const ROOT = resolve(import.meta.dirname, "..");
// a global npm install of the packed SDK with its dependencies: over the 120 s a file gets on a busy machine (as the
// README install and CLI walks)
t.setTimeout(300_000);

/** The fenced blocks of one `## ` section of the README, as [language, text]. */
function blocks(section: string): [string, string][] {
  const md = readFileSync(join(ROOT, "README.md"), "utf8");
  const start = md.indexOf(`\n## ${section}\n`);
  if (start < 0) throw new Error(`no section "## ${section}"`);
  const next = md.indexOf("\n## ", start + 1);
  const body = md.slice(start, next < 0 ? undefined : next);
  return [...body.matchAll(/^```(\w+)[ \t]*\n([\s\S]*?)^```[ \t]*$/gm)].map((m) => [m[1]!, m[2]!]);
}

interface ServerEntry {
  command: string;
  args: string[];
  env: Record<string, string>;
}

t.test("the README's MCP configuration works from an empty folder", async (t) => {
  const section = blocks("MCP (for LLM agents)");
  const install = section.find(([lang, text]) => lang === "sh" && /npm install -g/.test(text));
  const json = section.find(([lang, text]) => lang === "json" && /mcpServers/.test(text));
  if (!install || !json) throw new Error("the MCP section has no install block or no configuration");
  const entry = (JSON.parse(json[1]) as { mcpServers: Record<string, ServerEntry> }).mcpServers["flock"]!;
  t.not(entry.command, "flock", "the command is not util-linux's name");
  if (existsSync("/usr/bin/flock")) {
    const theirs = spawnSync("/usr/bin/flock", ["--version"], { encoding: "utf8" });
    t.match(theirs.stdout + theirs.stderr, /util-linux/, "this machine's `flock` is util-linux's");
  }

  const prefix = await mkdtemp(join(tmpdir(), "flock-global-"));
  const empty = await mkdtemp(join(tmpdir(), "flock-empty-"));
  const tarballs = new Set(
    spawnSync("ls", [ROOT], { encoding: "utf8" })
      .stdout.split("\n")
      .filter((f) => f.endsWith(".tgz")),
  );
  t.teardown(async () => {
    await rm(prefix, { recursive: true, force: true });
    await rm(empty, { recursive: true, force: true });
    // the block's npm pack writes the tarball into the checkout: remove what it added
    for (const f of spawnSync("ls", [ROOT], { encoding: "utf8" }).stdout.split("\n")) {
      if (f.endsWith(".tgz") && !tarballs.has(f)) await rm(join(ROOT, f), { force: true });
    }
  });

  // the install block as pasted at the checkout's root; npm's global prefix is a temp folder (npm_config_prefix)
  // npm pack's prepare would rebuild client/dist under the other tests that run it: build it first, pack it as it is
  await ensureClientBuilt();
  const env = {
    PATH: process.env["PATH"] ?? "",
    HOME: process.env["HOME"] ?? "/tmp",
    ...npmEnv(prefix),
    npm_config_ignore_scripts: "true",
  };
  const run = await new Promise<{ code: number | null; out: string }>((done) => {
    const child = spawn("bash", ["-eo", "pipefail", "-c", install[1]], {
      cwd: ROOT,
      env,
      stdio: ["ignore", "pipe", "pipe"],
    });
    let out = "";
    child.stdout.on("data", (d: Buffer) => (out += d.toString()));
    child.stderr.on("data", (d: Buffer) => (out += d.toString()));
    child.on("exit", (code) => done({ code, out }));
  });
  t.equal(run.code, 0, run.code === 0 ? "the install block ran" : `the install block failed:\n${run.out}`);
  t.ok(existsSync(join(prefix, "bin", entry.command)), `${entry.command} is on the global PATH`);

  const node = await startTestNode(t, { engine: "memory" });
  const agent = await registerAgent(node.url, "desk");
  // what a desktop app does: the entry's command and args, its env, from a folder that holds nothing of Flock; the
  // global bin comes after the system's folders, so a name util-linux has would run util-linux's command
  const transport = new StdioClientTransport({
    command: entry.command,
    args: entry.args,
    cwd: empty,
    env: {
      ...entry.env,
      PATH: `/usr/local/bin:/usr/bin:/bin:${join(prefix, "bin")}`,
      FLOCK_URL: node.url,
      FLOCK_TOKEN: agent.token,
    },
    stderr: "pipe",
  });
  const client = new Client({ name: "desktop", version: "1.0.0" });
  await client.connect(transport);
  t.teardown(() => client.close());
  const tools = (await client.listTools()).tools.map((x) => x.name);
  t.ok(tools.includes("send_message") && tools.includes("whoami"), `the tools are listed (${tools.length})`);
  const who = (await client.callTool({ name: "whoami", arguments: {} })) as CallToolResult;
  t.notOk(who.isError);
  t.match(
    who.content.map((c) => (c.type === "text" ? c.text : "")).join(""),
    agent.id,
    "whoami answers as the token's agent",
  );
});
