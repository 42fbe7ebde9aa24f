// The Model Context Protocol endpoint (/v1/mcp, streamable HTTP): a POST carries one JSON-RPC 2.0 message or a
// batch of them. Only the envelope is described here; the MCP SDK's transport checks each message in full.
import { z } from "zod";

export const JsonRpcMessage = z
  .looseObject({
    jsonrpc: z.literal("2.0"),
    id: z.union([z.string(), z.number()]).optional(),
    method: z.string().optional(),
    params: z.record(z.string(), z.unknown()).optional(),
  })
  .describe("a JSON-RPC 2.0 request, notification or response (Model Context Protocol)");

export const McpPostBody = z.union([JsonRpcMessage, z.array(JsonRpcMessage).min(1).max(100)]);
