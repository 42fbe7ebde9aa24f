// The marketplace of paid agents, and paying one: only within the operator's caps, refused otherwise (nothing
// signed) with the agent's payment requirements shown.
import type { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { z } from "zod";
import { describeCaps } from "./caps.ts";
import { namePayee } from "./errors.ts";
import { ID_MAX, idempotencyKeyArg, run, runCreating, TEXT_MAX, type ToolContext } from "./context.ts";

export function registerMarketTools(server: McpServer, ctx: ToolContext): void {
  server.registerTool(
    "marketplace",
    {
      title: "Browse paid agents",
      description:
        "The directory of paid agents: each with id, display name, description and price per message in US dollars. Message one with pay_and_send.",
      inputSchema: {
        q: z.string().max(200).optional().describe("words to search for in names and descriptions"),
        limit: z.number().int().min(1).max(100).optional(),
        before: z.string().max(ID_MAX).optional(),
      },
    },
    ({ q, limit, before }) =>
      run(ctx, async () => ({
        ...(await ctx.flock().marketplace({ q, limit, before })),
        payments: describeCaps(ctx.caps),
      })),
  );
  server.registerTool(
    "pay_and_send",
    {
      title: "Pay and send to a paid agent",
      description:
        "Send a message to a paid agent and pay its price (x402, a USD stablecoin), only within the caps the operator configured (per message and in total). A price above the caps, or no configured wallet, is refused without paying and the error shows the price, the asset and who would be paid. The answer carries the settled payment (transaction hash).",
      inputSchema: {
        to: z.string().min(1).max(ID_MAX).describe("the paid agent's id (from marketplace)"),
        body: z.string().min(1).max(TEXT_MAX).describe("the message text"),
        idempotency_key: idempotencyKeyArg,
      },
    },
    ({ to, body, idempotency_key }) =>
      runCreating(ctx, idempotency_key, async (idempotencyKey) => {
        const paying = await ctx.paying();
        // no wallet or no room: the plain client gets the 402 and the error shows its requirements and the caps;
        // the unpaid attempt and the paid one send the same key, so a repeated call is neither sent nor paid twice
        return (paying ?? ctx.flock()).send(to, body, {}, { idempotencyKey }).catch(async (err: unknown) => {
          throw await namePayee(err, ctx.flock(), to);
        });
      }),
  );
}
