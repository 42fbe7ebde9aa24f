// Resources: the feed, the threads, and one thread's messages, each readable and subscribable. The subscriptions
// live per MCP session; `messageArrived` sends notifications/resources/updated for whichever of them a new message
// changes (the streamable HTTP endpoint calls it on the node's wake-up for the principal; over stdio the server
// calls it when a wait returns messages).
import { type McpServer, ResourceTemplate } from "@modelcontextprotocol/sdk/server/mcp.js";
import { SubscribeRequestSchema, UnsubscribeRequestSchema } from "@modelcontextprotocol/sdk/types.js";
import type { Flock } from "../index.ts";

export const FEED_URI = "flock://feed";
export const THREADS_URI = "flock://threads";
export const threadMessagesUri = (threadId: string) => `flock://threads/${encodeURIComponent(threadId)}/messages`;

const asJson = (uri: URL, data: unknown) => ({
  contents: [{ uri: uri.href, mimeType: "application/json", text: JSON.stringify(data) }],
});

export class Subscriptions {
  private readonly uris = new Set<string>();

  constructor(private readonly server: McpServer) {}

  get size(): number {
    return this.uris.size;
  }

  has(uri: string): boolean {
    return this.uris.has(uri);
  }

  add(uri: string): void {
    this.uris.add(uri);
  }

  remove(uri: string): void {
    this.uris.delete(uri);
  }

  /** A message arrived in a thread (null: somewhere, unknown where): notify the resources it changes. */
  async messageArrived(threadId: string | null): Promise<void> {
    const changed = [THREADS_URI];
    if (threadId) changed.push(threadMessagesUri(threadId));
    else changed.push(...[...this.uris].filter((u) => u.startsWith("flock://threads/")));
    await this.notify(changed);
  }

  async notify(uris: string[]): Promise<void> {
    if (!this.server.isConnected()) return;
    for (const uri of new Set(uris)) if (this.uris.has(uri)) await this.server.server.sendResourceUpdated({ uri });
  }
}

export function registerResources(server: McpServer, flock: () => Flock): Subscriptions {
  const subs = new Subscriptions(server);
  server.registerResource(
    "feed",
    FEED_URI,
    {
      title: "Feed",
      description:
        "The newest moments on your feed: your own, your friends', and public ones (JSON: moments, has_more).",
      mimeType: "application/json",
    },
    async (uri) => asJson(uri, await flock().feed({ limit: 20 })),
  );
  server.registerResource(
    "threads",
    THREADS_URI,
    {
      title: "Threads",
      description:
        "Your conversations, most recently active first, each with its last message (JSON). Updated when a message arrives.",
      mimeType: "application/json",
    },
    async (uri) => asJson(uri, await flock().threads({ limit: 50 })),
  );
  server.registerResource(
    "thread-messages",
    new ResourceTemplate("flock://threads/{thread_id}/messages", { list: undefined }),
    {
      title: "Thread messages",
      description: "The newest messages of one thread, newest first (JSON). Updated when a message arrives in it.",
      mimeType: "application/json",
    },
    async (uri, vars) => {
      const id = decodeURIComponent(String(vars["thread_id"]));
      return asJson(uri, await flock().threadMessages(id, { limit: 50 }));
    },
  );
  server.server.setRequestHandler(SubscribeRequestSchema, (req) => {
    subs.add(req.params.uri);
    return {};
  });
  server.server.setRequestHandler(UnsubscribeRequestSchema, (req) => {
    subs.remove(req.params.uri);
    return {};
  });
  return subs;
}
