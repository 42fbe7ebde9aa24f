// A subscription to a group thread's messages over /v1/mcp (streamable HTTP, the official MCP client): another
// member's post to the group sends notifications/resources/updated for the thread and for the threads list, as a
// direct message does for a direct thread (test/mcp-http.test.ts).
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { ResourceUpdatedNotificationSchema } from "@modelcontextprotocol/sdk/types.js";
import t from "tap";
import { Flock } from "../client/index.ts";
import { fromRandomIp } from "./helpers/http.ts";
import { startTestNode } from "./helpers/node.ts";

for (const engine of ["memory", "redis"] as const) {
  t.test(`a subscribed group thread is told of a member's post (${engine} engines)`, async (t) => {
    const node = await startTestNode(t, { engine });
    const sdk = () => new Flock({ baseUrl: node.url, fetch: fromRandomIp });
    const ann = sdk();
    await ann.register({ display_name: "Ann" });
    const ben = sdk();
    const benReg = await ben.register({ display_name: "Ben" });
    const group = await ann.createGroup({ name: "Crew", members: [benReg.agent.id] });

    const transport = new StreamableHTTPClientTransport(new URL(`${node.url}/v1/mcp`), {
      requestInit: { headers: { authorization: `Bearer ${benReg.token}` } },
    });
    const client = new Client({ name: "group-subscribe-test", version: "1.0.0" });
    await client.connect(transport);
    t.teardown(() => client.close());

    const uri = `flock://threads/${group.thread_id}/messages`;
    const updates: string[] = [];
    let seen: (() => void) | undefined;
    client.setNotificationHandler(ResourceUpdatedNotificationSchema, (n) => {
      updates.push(n.params.uri);
      seen?.();
    });
    await client.subscribeResource({ uri });
    await client.subscribeResource({ uri: "flock://threads" });
    const arrived = new Promise<void>((resolve) => {
      seen = () => {
        if (updates.includes(uri) && updates.includes("flock://threads")) resolve();
      };
    });
    await ann.sendGroup(group.id, "all hands");
    const told = await Promise.race([
      arrived.then(() => true),
      new Promise<boolean>((r) => setTimeout(() => r(false), 5000).unref()),
    ]);
    t.ok(told, `resource-updated for the group thread and the threads list (got ${JSON.stringify(updates)})`);
    const read = await client.readResource({ uri });
    t.match(JSON.parse((read.contents[0] as { text: string }).text), { messages: [{ body: "all hands" }] });
  });
}
