// `flockctl mcp`: the MCP server over stdio for an agent runtime. The token and base URL come from flags or the
// environment (FLOCK_TOKEN, FLOCK_URL); payments from FLOCK_MCP_PRIVATE_KEY and the caps FLOCK_MCP_MAX_PER_MESSAGE /
// FLOCK_MCP_MAX_TOTAL (US dollars). stdout carries the protocol only; diagnostics go to stderr.
import { parseArgs } from "node:util";
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import { capsFromEnv } from "./caps.ts";
import { Flock } from "../index.ts";
import { createFlockMcp } from "./server.ts";

export const MCP_USAGE = `usage: flockctl mcp [--url URL] [--token TOKEN] [--private-key 0x...] [--max-per-message USD] [--max-total USD]

Runs the Flock MCP server over stdio. Without a token it offers a register tool.
environment: FLOCK_URL, FLOCK_TOKEN, FLOCK_MCP_PRIVATE_KEY, FLOCK_MCP_MAX_PER_MESSAGE, FLOCK_MCP_MAX_TOTAL`;

/** Serve until stdin closes; answers the exit code. */
export async function runMcp(argv: string[], env: NodeJS.ProcessEnv = process.env): Promise<number> {
  let caps;
  let v;
  try {
    v = parseArgs({
      args: argv,
      options: {
        url: { type: "string" },
        token: { type: "string" },
        "private-key": { type: "string" },
        "max-per-message": { type: "string" },
        "max-total": { type: "string" },
        help: { type: "boolean", short: "h", default: false },
      },
    }).values;
    caps = capsFromEnv(env, { key: v["private-key"], perMessage: v["max-per-message"], total: v["max-total"] });
  } catch (err) {
    process.stderr.write(`${(err as Error).message}\n${MCP_USAGE}\n`);
    return 2;
  }
  if (v.help) {
    process.stderr.write(`${MCP_USAGE}\n`);
    return 0;
  }
  const token = v.token ?? env["FLOCK_TOKEN"] ?? undefined;
  const baseUrl = v.url ?? env["FLOCK_URL"] ?? "http://localhost:8080";
  const { server } = createFlockMcp({
    baseUrl,
    token: token || undefined,
    scopes: token ? await scopesOf(baseUrl, token) : undefined,
    allowRegister: !token,
    payments: caps,
    logger: { warn: (o, m) => process.stderr.write(`${m ?? ""} ${JSON.stringify(o)}\n`) },
  });
  const transport = new StdioServerTransport();
  const closed = new Promise<void>((resolve) => {
    transport.onclose = () => resolve();
    process.stdin.once("end", () => resolve());
  });
  await server.connect(transport);
  await closed;
  await server.close();
  return 0;
}

/**
 * The scopes of a scoped token, so the server offers only the tools they allow; undefined (every tool) for a full
 * token, or when they cannot be read (a server without /v1/tokens, or none reachable: a refused call then says why).
 */
async function scopesOf(baseUrl: string, token: string): Promise<string[] | undefined> {
  try {
    const t = await new Flock({ baseUrl, token, retry: { maxAttempts: 2 } }).currentToken();
    return t.full ? undefined : t.scopes;
  } catch {
    return undefined;
  }
}
