// The MCP server Flock serves at /v1/mcp over streamable HTTP, driven by the official MCP client with the bearer
// token: the tools act as the token's principal; a subscribed thread gets notifications/resources/updated within a
// second of a new message (the node's wake-up, not a poll); another principal cannot use the session; the event
// stream ends cleanly when the client goes away.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { type CallToolResult, ResourceUpdatedNotificationSchema } from "@modelcontextprotocol/sdk/types.js";
import t from "tap";
import { Flock } from "../client/index.ts";
import { fromRandomIp } from "./helpers/http.ts";
import { startTestNode } from "./helpers/node.ts";

for (const engine of ["memory", "redis"] as const) {
  t.test(`streamable HTTP at /v1/mcp (${engine} engines)`, async (t) => {
    const node = await startTestNode(t, { engine });
    const sdk = () => new Flock({ baseUrl: node.url, fetch: fromRandomIp });
    const ann = sdk();
    const annReg = await ann.register({ display_name: "Ann" });
    const ben = sdk();
    const benReg = await ben.register({ display_name: "Ben" });

    const connect = async (token: string) => {
      const transport = new StreamableHTTPClientTransport(new URL(`${node.url}/v1/mcp`), {
        requestInit: { headers: { authorization: `Bearer ${token}` } },
      });
      const client = new Client({ name: "http-test", version: "1.0.0" });
      await client.connect(transport);
      t.teardown(() => client.close());
      return { client, transport };
    };
    const { client: benMcp, transport } = await connect(benReg.token);
    t.ok(transport.sessionId, "a session was opened");
    const tools = (await benMcp.listTools()).tools.map((x) => x.name);
    t.ok(tools.includes("wait_for_messages") && tools.includes("send_message"), `${tools.length} tools`);
    t.notOk(tools.includes("register"), "no register over HTTP");
    const me = (await benMcp.callTool({ name: "whoami", arguments: {} })) as CallToolResult;
    t.match(
      JSON.parse((me.content[0] as { text: string }).text),
      { id: benReg.agent.id, display_name: "Ben" },
      "the tools act as the token's agent",
    );

    // a first message makes the thread; Ben subscribes to its messages and to the threads list
    const first = await ann.send(benReg.agent.id, "first");
    const uri = `flock://threads/${first.thread_id}/messages`;
    const updates: { uri: string; at: number }[] = [];
    let seen: (() => void) | undefined;
    benMcp.setNotificationHandler(ResourceUpdatedNotificationSchema, (n) => {
      updates.push({ uri: n.params.uri, at: performance.now() });
      seen?.();
    });
    await benMcp.subscribeResource({ uri });
    await benMcp.subscribeResource({ uri: "flock://threads" });

    const arrived = new Promise<void>((resolve) => {
      seen = () => {
        if (updates.some((u) => u.uri === uri)) resolve();
      };
    });
    const sentAt = performance.now();
    await ann.send(benReg.agent.id, "second");
    const within = await Promise.race([
      arrived.then(() => true),
      new Promise<boolean>((r) => setTimeout(() => r(false), 1000).unref()),
    ]);
    t.ok(within, "resource-updated for the thread's messages within a second of the send");
    const got = updates.find((u) => u.uri === uri);
    if (got) t.ok(got.at - sentAt < 1000, `after ${Math.round(got.at - sentAt)} ms`);
    t.ok(
      updates.some((u) => u.uri === "flock://threads"),
      "and for the threads list",
    );
    const read = await benMcp.readResource({ uri });
    t.match(JSON.parse((read.contents[0] as { text: string }).text), {
      messages: [{ body: "second" }, { body: "first" }],
    });

    // unsubscribed: no more notifications for it
    await benMcp.unsubscribeResource({ uri });
    await benMcp.unsubscribeResource({ uri: "flock://threads" });
    const before = updates.length;
    await ann.send(benReg.agent.id, "third");
    const waited = (await benMcp.callTool({
      name: "wait_for_messages",
      arguments: { timeout_seconds: 5 },
    })) as CallToolResult;
    t.match(JSON.parse((waited.content[0] as { text: string }).text), {
      messages: [{ body: "first" }, { body: "second" }, { body: "third" }],
    });
    t.equal(updates.length, before, "no notification once unsubscribed");

    // another agent's token cannot use Ben's session
    const stolen = await fetch(`${node.url}/v1/mcp`, {
      method: "POST",
      headers: {
        authorization: `Bearer ${annReg.token}`,
        "content-type": "application/json",
        accept: "application/json, text/event-stream",
        "mcp-session-id": transport.sessionId!,
        "mcp-protocol-version": "2025-06-18",
      },
      body: JSON.stringify({ jsonrpc: "2.0", id: 9, method: "tools/list" }),
    });
    t.equal(stolen.status, 404);
    t.match(await stolen.json(), { error: "not_found", message: /initialize/ });
    const noAuth = await fetch(`${node.url}/v1/mcp`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: "{}",
    });
    t.equal(noAuth.status, 401);

    // Ann over her own session: a tool error, not a protocol failure
    const { client: annMcp } = await connect(annReg.token);
    const bad = (await annMcp.callTool({
      name: "read_thread",
      arguments: { thread_id: "thread_1" },
    })) as CallToolResult;
    t.equal(bad.isError, true);
    t.match((bad.content[0] as { text: string }).text, /^404 not_found/);
    const sessionId = transport.sessionId!;
    await transport.terminateSession();
    const after = await fetch(`${node.url}/v1/mcp`, {
      method: "DELETE",
      headers: { authorization: `Bearer ${benReg.token}`, "mcp-session-id": sessionId },
    });
    t.equal(after.status, 404, "a terminated session is gone");
  });
}
