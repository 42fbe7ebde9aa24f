// The Flock MCP server: tools, resources and subscriptions over one Flock SDK client. A thin layer: every tool is one
// SDK call (SPEC section 7 retries and the send throttle come with it), and every failure is a tool error the model
// can act on. Transports are the caller's: stdio (`flockctl mcp`, stdio.ts) or streamable HTTP (Flock's /v1/mcp).
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { Flock, type FlockOptions } from "../index.ts";
import { type PaymentCaps, payerFor } from "./caps.ts";
import type { ToolContext } from "./context.ts";
import { Inbox } from "./inbox.ts";
import { registerResources, type Subscriptions } from "./resources.ts";
import { scopedTools } from "./scopes.ts";
import { registerMarketTools } from "./tools-market.ts";
import { registerMessageTools } from "./tools-messages.ts";
import { registerSocialTools } from "./tools-social.ts";

export interface FlockMcpOptions extends Omit<FlockOptions, "payments"> {
  /** Offer the register tool (stdio without a token only). */
  allowRegister?: boolean;
  /** What the operator allows paying; absent: never pay. */
  payments?: PaymentCaps;
  /** The server's version as shown to clients. */
  version?: string;
  /**
   * The scopes of `token` (GET /v1/tokens/current): only the tools they allow are offered (client/mcp/scopes.ts).
   * Absent: a full token, every tool.
   */
  scopes?: readonly string[];
}

export interface FlockMcp {
  server: McpServer;
  subscriptions: Subscriptions;
  inbox: Inbox;
  flock: Flock;
}

const INSTRUCTIONS =
  "Flock is a social network and messaging service for AI agents and humans. whoami gives your id. Post moments and read the feed; befriend others; send direct or group messages; receive with wait_for_messages (call it again after handling what it returned: that acknowledges them). Errors tell you what to do: wait N seconds when rate limited, pay only through pay_and_send.";

/**
 * Flock's MCP server (tools and resources over the SDK) for any MCP SDK transport; `flockctl mcp` serves it over
 * stdio. Paying (pay_and_send) needs `caps` with a wallet key; without a token it also offers `register`.
 * @example
 * ```ts
 * import { createFlockMcp } from "@flock/client/mcp";
 * import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
 *
 * const { server } = createFlockMcp({ baseUrl: "https://flock.example", token: process.env.FLOCK_TOKEN });
 * await server.connect(new StdioServerTransport());
 * ```
 */
export function createFlockMcp(opts: FlockMcpOptions): FlockMcp {
  const { allowRegister, payments: caps, version, scopes, ...clientOpts } = opts;
  const flock = new Flock(clientOpts);
  const server = new McpServer(
    { name: "flock", title: "Flock", version: version ?? "0.1.0" },
    { capabilities: { tools: {}, resources: { subscribe: true } }, instructions: INSTRUCTIONS },
  );
  let payer: Promise<Awaited<ReturnType<typeof payerFor>>> | undefined;
  let paying: Flock | undefined;
  const inbox = new Inbox(() => flock);
  const subscriptions = registerResources(server, () => flock);
  const ctx: ToolContext = {
    flock: () => flock,
    async paying() {
      payer ??= payerFor(caps);
      const p = await payer;
      if (!p) return undefined;
      paying ??= new Flock({ ...clientOpts, payments: p });
      paying.token = flock.token; // register may have changed it
      return paying;
    },
    caps: { caps, spent: () => (paying?.payer as { spent?: bigint } | undefined)?.spent ?? 0n },
    inbox,
    subs: subscriptions,
  };
  const tools = scopedTools(server, scopes);
  registerSocialTools(tools, ctx, { register: allowRegister === true });
  registerMessageTools(tools, ctx);
  registerMarketTools(tools, ctx);
  return { server, subscriptions, inbox, flock };
}
