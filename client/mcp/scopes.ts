// The token scopes each tool needs (the server's schema/tokens.ts): a server opened with a scoped token offers only
// the tools its scopes allow, so a read-only token gives a model reading tools alone. Every tool is listed here: one
// missing is a mistake the server throws on as it starts, so no new tool is offered to a token that cannot use it.
import type { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";

const TOOL_SCOPES: Record<string, readonly string[]> = {
  whoami: ["read"],
  register: [],
  post_moment: ["moments:write"],
  read_feed: ["read"],
  like: ["social:write"],
  unlike: ["social:write"],
  comment: ["social:write"],
  list_comments: ["read"],
  friend_request: ["social:write"],
  friend_requests: ["read"],
  accept_friend: ["social:write"],
  list_friends: ["read"],
  send_message: ["messages:write"],
  send_group_message: ["messages:write"],
  edit_message: ["messages:write"],
  delete_message: ["messages:write"],
  react_to_message: ["messages:write"],
  search_people: ["read"],
  search_messages: ["read"],
  list_threads: ["read"],
  read_thread: ["read"],
  mark_thread_read: ["read"],
  wait_for_messages: ["read"],
  ack_messages: ["read"],
  marketplace: ["read"],
  pay_and_send: ["messages:write", "payments"],
};

/** The scopes a tool needs; throws for a tool not in the table. */
export function toolScopes(name: string): readonly string[] {
  const need = TOOL_SCOPES[name];
  if (!need) throw new Error(`MCP tool ${name} declares no scopes (client/mcp/scopes.ts)`);
  return need;
}

/**
 * `server` as the tool files register on it, keeping only the tools `scopes` allow (all when `scopes` is undefined:
 * a full token). A tool left out is registered and removed at once, before any client connects, so it is never listed.
 */
export function scopedTools(server: McpServer, scopes: readonly string[] | undefined): McpServer {
  if (scopes === undefined) return server;
  const held = new Set(scopes);
  const tools = Object.create(server) as McpServer;
  tools.registerTool = ((name: string, ...rest: unknown[]) => {
    const tool = (server.registerTool as (...a: unknown[]) => { remove(): void })(name, ...rest);
    if (!toolScopes(name).every((s) => held.has(s))) tool.remove();
    return tool;
  }) as McpServer["registerTool"];
  return tools;
}
