// The Model Context Protocol over streamable HTTP at /v1/mcp: POST a JSON-RPC message (an initialize opens a
// session, named by the Mcp-Session-Id header of the answer), GET the session's event stream (resource-updated
// notifications), DELETE to end it. The same bearer token as everywhere; the tools act as that principal. Any token
// may open a session: it offers only the tools the token's scopes allow (runtime/mcp/sessions.ts), and each tool's
// call is checked again by the route it calls.
import { defineRoute, type Route } from "../runtime/http/route.ts";
import { McpPostBody } from "../schema/mcp.ts";

const post = defineRoute({
  method: "POST",
  path: "/v1/mcp",
  auth: "principal",
  scope: "any",
  body: McpPostBody,
  handle: (ctx) => ctx.svc.mcp.handle(ctx),
});
const stream = defineRoute({
  method: "GET",
  path: "/v1/mcp",
  auth: "principal",
  scope: "any",
  noHead: true,
  handle: (ctx) => ctx.svc.mcp.handle(ctx),
});
const end = defineRoute({
  method: "DELETE",
  path: "/v1/mcp",
  auth: "principal",
  scope: "any",
  handle: (ctx) => ctx.svc.mcp.handle(ctx),
});

export const mcpRoutes: Route[] = [post, stream, end];
