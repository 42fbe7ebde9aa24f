// For the MCP tests: a fresh build of the client package when its sources are newer than dist (the tests run
// `node client/dist/bin.js mcp` as an agent runtime would), and the official MCP client over stdio.
import { execFile } from "node:child_process";
import { readdir, stat } from "node:fs/promises";
import { join, resolve } from "node:path";
import { promisify } from "node:util";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { Flock } from "../../client/index.ts";
import { fromRandomIp } from "./http.ts";

const run = promisify(execFile);
export const ROOT = resolve(import.meta.dirname, "../..");
export const BIN = join(ROOT, "client/dist/bin.js");

async function newest(dir: string, ext: string): Promise<number> {
  let latest = 0;
  for (const f of await readdir(dir, { withFileTypes: true, recursive: true })) {
    if (!f.isFile() || !f.name.endsWith(ext) || f.name.endsWith(".d.ts")) continue;
    latest = Math.max(latest, (await stat(join(f.parentPath, f.name))).mtimeMs);
  }
  return latest;
}

/** Builds client/dist unless it is newer than every source of client/ and client/mcp/. */
export async function ensureClientBuilt(): Promise<void> {
  const src = Math.max(
    await newest(join(ROOT, "client/mcp"), ".ts"),
    (await stat(join(ROOT, "client/cli.ts"))).mtimeMs,
  );
  const built = await stat(join(ROOT, "client/dist/mcp/server.js")).then(
    (s) => s.mtimeMs,
    () => 0,
  );
  if (built > src) return;
  await run(
    process.execPath,
    [join(ROOT, "node_modules/typescript/bin/tsc"), "-p", join(ROOT, "client/tsconfig.json")],
    { cwd: ROOT, timeout: 60_000 },
  );
}

/** `flockctl mcp` spawned over stdio with the given environment, connected with the official client. */
export async function stdioClient(env: Record<string, string>, name = "test"): Promise<Client> {
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [BIN, "mcp"],
    env: { PATH: process.env["PATH"] ?? "", ...env },
    stderr: "pipe",
  });
  const client = new Client({ name, version: "1.0.0" });
  await client.connect(transport);
  return client;
}

/** A tool's answer as parsed JSON; fails on a tool error. */
export async function callJson<T = any>(client: Client, name: string, args: Record<string, unknown> = {}): Promise<T> {
  const r = (await client.callTool({ name, arguments: args })) as CallToolResult;
  const text = r.content.map((c) => (c.type === "text" ? c.text : "")).join("");
  if (r.isError) throw new Error(`${name} failed: ${text}`);
  return JSON.parse(text) as T;
}

/** A tool's error text; fails when the tool succeeded. */
export async function callError(client: Client, name: string, args: Record<string, unknown> = {}): Promise<string> {
  const r = (await client.callTool({ name, arguments: args })) as CallToolResult;
  const text = r.content.map((c) => (c.type === "text" ? c.text : "")).join("");
  if (!r.isError) throw new Error(`${name} succeeded: ${text}`);
  return text;
}

/** SDK clients of the node at `url`, each request from a new client address: `sdk()` to register, `sdk(token)`. */
export const sdkAt =
  (url: string) =>
  (token?: string): Flock =>
    new Flock({ baseUrl: url, token, fetch: fromRandomIp });
