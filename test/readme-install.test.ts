// The READMEs' install commands run as a reader runs them, at the checkout's root: README.md's MCP line (npm pack of
// client/, then a global install of the tarball with the MCP SDK's optional peers; the global prefix is a private
// one here) and both READMEs' SDK install (the same npm pack, then npm install of the tarball "in your project": a
// fresh one). /tmp becomes a fresh temporary folder; npm takes what it can from its cache. (test/readme-shell.test.ts
// checks that every shell block is run by one of the README tests.)
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import t from "tap";
import { npmEnv } from "./helpers/npm-env.ts";
import { startTestNode } from "./helpers/node.ts";
import { commands, READMES, ROOT, shellBlock as block } from "./helpers/readme-blocks.ts";
import { bash } from "./helpers/shell.ts";

// npm pack builds the package (two tsc runs) and the global install brings about 100 packages from npm's cache: on
// 2 busy cores that can pass the suite's 120 s a file
t.setTimeout(300_000);

const temp = (t: { teardown(fn: () => void): void }, label: string) => {
  const dir = mkdtempSync(join(tmpdir(), `flock-readme-${label}-`));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
};

t.test("the packed SDK and the MCP server install as the READMEs say", async (t) => {
  const tmp = temp(t, "pack");
  const node = await startTestNode(t, { engine: "memory" });
  // README's MCP line, at the checkout's root: pack, then a global install (into a private prefix) of the tarball and
  // the MCP SDK's optional peers
  const mcp = block(
    "README.md: npm pack ./client --pack-destination /tmp && npm install -g /tmp/flock-client-0.1.0.tgz @modelcontextprotocol/sdk@^1.32.2 zod@^4.6.7",
  );
  const prefix = join(tmp, "global");
  const installed = await bash(mcp.code.replaceAll("/tmp", tmp), ROOT, npmEnv(prefix));
  t.equal(
    installed.code,
    0,
    `${mcp.file}:${mcp.line} runs${installed.code === 0 ? "" : `:\n${installed.stdout}${installed.stderr}`}`,
  );
  t.ok(existsSync(join(tmp, "flock-client-0.1.0.tgz")), "the tarball is where the command says");
  t.notOk(existsSync(join(ROOT, "flock-client-0.1.0.tgz")), "and none is left at the checkout's root");
  // any folder finds the command, and `flockctl mcp` serves the tools to an MCP client
  const reg = await fetch(`${node.url}/v1/agents/register`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ display_name: "Mcp" }),
  });
  const { token } = (await reg.json()) as { token: string };
  const transport = new StdioClientTransport({
    command: join(prefix, "bin", "flockctl"),
    args: ["mcp"],
    cwd: tmp,
    env: {
      PATH: `${join(prefix, "bin")}:${process.env["PATH"] ?? ""}`,
      HOME: process.env["HOME"] ?? "/tmp",
      FLOCK_URL: node.url,
      FLOCK_TOKEN: token,
    },
    stderr: "pipe",
  });
  const client = new Client({ name: "readme", version: "1.0.0" });
  await client.connect(transport);
  t.teardown(() => client.close());
  const tools = (await client.listTools()).tools.map((x) => x.name);
  t.ok(
    tools.includes("send_message") && tools.includes("pay_and_send"),
    `the globally installed flockctl mcp lists its tools (${tools.length})`,
  );

  // both READMEs' SDK install: the same `npm pack` line as the MCP one and the same `npm install` line (checked, so
  // each runs once), the install "in your project": a fresh one
  const sdk = READMES.map((file) => block(`${file}: npm pack ./client --pack-destination /tmp`));
  const [pack, install, ...rest] = commands(sdk[0]!.code);
  for (const b of sdk) {
    t.same(commands(b.code), [pack, install], `${b.file}:${b.line}: npm pack, then npm install of its tarball`);
  }
  t.equal(pack, commands(mcp.code)[0]!.split(" && ")[0], "its npm pack is the one run above");
  t.same(rest, []);
  const app = join(tmp, "app");
  mkdirSync(app);
  writeFileSync(
    join(app, "package.json"),
    JSON.stringify({ name: "app", version: "1.0.0", private: true, type: "module" }),
  );
  const r = await bash(install!.replaceAll("/tmp", tmp), app, npmEnv());
  t.equal(r.code, 0, `${install} runs in a project${r.code === 0 ? "" : `:\n${r.stdout}${r.stderr}`}`);
  const used = await bash(
    `node -e 'import("@flock/client").then(async (m) => { const f = new m.Flock({ baseUrl: process.env.FLOCK_URL }); const r = await f.register({ display_name: "Installed" }); console.log(r.agent.display_name) })'`,
    app,
    { FLOCK_URL: node.url },
  );
  t.equal(
    used.stdout.trim(),
    "Installed",
    `the installed package talks to the node${used.stderr ? `: ${used.stderr}` : ""}`,
  );
});
