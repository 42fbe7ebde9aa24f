// The MCP tools that create something send an Idempotency-Key per call (the model's `idempotency_key`, or a fresh
// one), and a failure whose outcome is unknown names the key to call again with. The MCP server in process, linked to
// the official client by the SDK's in-memory transport; against a stand-in server on a real socket, then a real node.
import { once } from "node:events";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js";
import t from "tap";
import { Flock } from "../client/index.ts";
import { createFlockMcp } from "../client/mcp/server.ts";
import { callError, callJson } from "./helpers/mcp.ts";
import { registerAgent } from "./helpers/http.ts";
import { startTestNode } from "./helpers/node.ts";

async function connect(
  t: { teardown(fn: () => Promise<void>): void },
  baseUrl: string,
  token: string,
): Promise<Client> {
  const { server } = createFlockMcp({ baseUrl, token, retry: { maxAttempts: 2, baseMs: 1 } });
  const [a, b] = InMemoryTransport.createLinkedPair();
  const client = new Client({ name: "test", version: "1.0.0" });
  await Promise.all([server.connect(a), client.connect(b)]);
  t.teardown(() => client.close());
  return client;
}

t.test("a stand-in server: the keys the tools send, and what a failure says", async (t) => {
  const keys: (string | undefined)[] = [];
  let down = false;
  const srv = createServer((req, res) => {
    req.resume();
    req.on("end", () => {
      keys.push(req.headers["idempotency-key"] as string | undefined);
      if (down) {
        res.writeHead(503, { "content-type": "application/json", "retry-after": "0" });
        return void res.end(
          JSON.stringify({ error: "unavailable", message: "Postgres is unavailable; retry shortly" }),
        );
      }
      res.writeHead(201, { "content-type": "application/json" });
      res.end(JSON.stringify({ id: "msg_1", thread_id: "thread_1" }));
    });
  });
  srv.listen(0, "127.0.0.1");
  await once(srv, "listening");
  t.teardown(() => void srv.close());
  const mcp = await connect(t, `http://127.0.0.1:${(srv.address() as AddressInfo).port}`, "am_x");

  const tools = (await mcp.listTools()).tools;
  for (const name of [
    "send_message",
    "send_group_message",
    "pay_and_send",
    "post_moment",
    "comment",
    "friend_request",
  ]) {
    const schema = tools.find((x) => x.name === name)?.inputSchema as {
      properties: Record<string, { description?: string }>;
      required?: string[];
    };
    t.match(
      schema.properties["idempotency_key"]?.description,
      /call again with the same idempotency_key/,
      `${name} takes an optional idempotency_key`,
    );
    t.notOk(schema.required?.includes("idempotency_key"));
  }

  await callJson(mcp, "send_message", { to: "2", body: "hi" });
  await callJson(mcp, "post_moment", { content: "hi", idempotency_key: "moment-1" });
  await callJson(mcp, "comment", { moment_id: "moment_1", body: "hi", idempotency_key: "comment-1" });
  t.match(keys[0], /^[A-Za-z0-9_-]{22}$/, "a fresh key when the model gives none");
  t.same(keys.slice(1), ["moment-1", "comment-1"], "the model's own key");

  keys.length = 0;
  down = true;
  const err = await callError(mcp, "send_group_message", { group_id: "group_1", body: "hi" });
  t.equal(keys.length, 2, "the SDK's retries");
  t.equal(keys[0], keys[1], "with one key");
  t.match(err, /^503 unavailable: /);
  t.match(err, `idempotency_key "${keys[0]}"`, "the error names the key to call again with");
  t.match(await callError(mcp, "friend_request", { to: "2", idempotency_key: "fr-1" }), /idempotency_key "fr-1"/);

  const bad = await mcp
    .callTool({ name: "send_message", arguments: { to: "2", body: "hi", idempotency_key: "has space" } })
    .catch((e: unknown) => e);
  t.match(JSON.stringify(bad), /visible ASCII/, "an invalid key is refused by the tool's schema");
});

t.test(
  "a real node: the same idempotency_key sends once; with another message, a 422 the model can act on",
  async (t) => {
    const node = await startTestNode(t, { engine: "memory" });
    const [a, b] = [await registerAgent(node.url, "mcp-idem-a"), await registerAgent(node.url, "mcp-idem-b")];
    const mcp = await connect(t, node.url, a.token);
    const first = await callJson<{ id: string }>(mcp, "send_message", {
      to: b.id,
      body: "once",
      idempotency_key: "mcp-once",
    });
    const again = await callJson<{ id: string }>(mcp, "send_message", {
      to: b.id,
      body: "once",
      idempotency_key: "mcp-once",
    });
    t.equal(again.id, first.id, "the first answer again");
    t.match(
      await callError(mcp, "send_message", { to: b.id, body: "twice", idempotency_key: "mcp-once" }),
      /422 idempotency_key_reused: .*use a new key/,
    );
    const got = await new Flock({ baseUrl: node.url, token: b.token }).pending({ timeout: 1 });
    t.same(
      got.map((m) => m.body),
      ["once"],
      "one message",
    );
  },
);
