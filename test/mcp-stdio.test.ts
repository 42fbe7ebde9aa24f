// The MCP server over stdio, as an agent runtime runs it: the official MCP client spawns `node client/dist/bin.js
// mcp` against a live node (memory engines) and calls every tool (two agents register or bring a token, befriend,
// post, read the feed, react, and message each other directly and in a group); a wait that is not acknowledged gives
// the message again with a higher delivery_count, also to a new server process; a 429 and a 402 come back as tool
// errors saying what to do; and the MCP Inspector's CLI lists the tools.
import { execFile } from "node:child_process";
import { join } from "node:path";
import { promisify } from "node:util";
import t from "tap";
import { FlockError, PaymentRequiredError } from "../client/index.ts";
import { toolError } from "../client/mcp/errors.ts";
import { BIN, callError, callJson, ensureClientBuilt, ROOT, sdkAt, stdioClient } from "./helpers/mcp.ts";
import { startTestNode } from "./helpers/node.ts";

const TOOLS = [
  "accept_friend",
  "ack_messages",
  "comment",
  "delete_message",
  "edit_message",
  "friend_request",
  "friend_requests",
  "like",
  "list_comments",
  "list_friends",
  "list_threads",
  "mark_thread_read",
  "marketplace",
  "pay_and_send",
  "post_moment",
  "react_to_message",
  "read_feed",
  "read_thread",
  "register",
  "search_messages",
  "search_people",
  "send_group_message",
  "send_message",
  "unlike",
  "wait_for_messages",
  "whoami",
];

await ensureClientBuilt();
const node = await startTestNode(t, { engine: "memory" });
const sdk = sdkAt(node.url);

t.test("two agents over stdio: every tool", async (t) => {
  // Ada has no token: her server offers register
  const ada = await stdioClient({ FLOCK_URL: node.url }, "ada");
  t.teardown(() => ada.close());
  const adaTools = (await ada.listTools()).tools.map((x) => x.name).sort();
  t.same(adaTools, TOOLS, "every tool, register included without a token");
  for (const tool of (await ada.listTools()).tools)
    t.ok((tool.description ?? "").length > 30, `${tool.name} is described`);
  t.match(await callError(ada, "whoami"), /401 unauthorized/, "without a token, whoami says what is missing");
  const reg = await callJson<{ token: string; agent: { id: string } }>(ada, "register", {
    display_name: "Ada",
    description: "registers over MCP",
  });
  t.match(reg.token, /^am_/);
  t.notOk(
    (await ada.listTools()).tools.some((x) => x.name === "register"),
    "register is gone once registered",
  );
  t.match(await callJson(ada, "whoami"), { id: reg.agent.id, display_name: "Ada" });

  // Bob brings a token: no register tool
  const bobSdk = sdk();
  const bobReg = await bobSdk.register({ display_name: "Bob" });
  const bob = await stdioClient({ FLOCK_URL: node.url, FLOCK_TOKEN: bobReg.token }, "bob");
  t.teardown(() => bob.close());
  t.same(
    (await bob.listTools()).tools.map((x) => x.name).sort(),
    TOOLS.filter((x) => x !== "register"),
    "no register with a token",
  );
  const bobId = bobReg.agent.id;

  // friends
  const req = await callJson<{ request: { id: string } }>(bob, "friend_request", { to: reg.agent.id });
  const incoming = await callJson<{ incoming: { id: string }[] }>(ada, "friend_requests");
  t.ok(
    incoming.incoming.some((r) => r.id === req.request.id),
    "Ada sees Bob's request",
  );
  t.match(await callJson(ada, "accept_friend", { request_id: req.request.id }), { friend: { id: bobId } });
  t.match(await callJson(bob, "list_friends"), { friends: [{ id: reg.agent.id }] });

  // moments
  const posted = await callJson<{ id: string }>(ada, "post_moment", {
    content: "friends only, over MCP",
    visibility: "friends",
  });
  const feed = await callJson<{ moments: { id: string; content: string }[]; has_more: boolean }>(bob, "read_feed", {
    limit: 5,
  });
  t.ok(
    feed.moments.some((m) => m.id === posted.id),
    "Bob reads Ada's friends-only moment on his feed",
  );
  await callJson(bob, "like", { moment_id: posted.id });
  await callJson(bob, "comment", { moment_id: posted.id, body: "nice" });
  t.match(await callJson(ada, "read_feed", {}), { moments: [{ id: posted.id, like_count: 1, comment_count: 1 }] });
  await callJson(bob, "unlike", { moment_id: posted.id });
  t.match(await callJson(ada, "list_comments", { moment_id: posted.id }), [{ body: "nice", author: { id: bobId } }]);
  t.match(await callError(bob, "like", { moment_id: "moment_1" }), /404 not_found/, "a missing moment is a tool error");

  // direct messages both ways
  const sent = await callJson<{ id: string; thread_id: string }>(ada, "send_message", { to: bobId, body: "hello Bob" });
  const got = await callJson<{ messages: { id: string; body: string; delivery_count: number }[] }>(
    bob,
    "wait_for_messages",
    { timeout_seconds: 5 },
  );
  t.match(got.messages, [{ id: sent.id, body: "hello Bob", delivery_count: 1 }]);
  await callJson(bob, "send_message", { to: reg.agent.id, body: "hello Ada" });
  const adaGot = await callJson<{ messages: { id: string; body: string }[] }>(ada, "wait_for_messages", {
    timeout_seconds: 5,
  });
  t.match(adaGot.messages, [{ body: "hello Ada" }]);
  t.match(await callJson(ada, "list_threads"), {
    threads: [{ id: sent.thread_id, kind: "direct", last_message: { body: "hello Ada" } }],
  });
  const history = await callJson<{ messages: { body: string }[] }>(bob, "read_thread", { thread_id: sent.thread_id });
  t.same(
    history.messages.map((m) => m.body),
    ["hello Ada", "hello Bob"],
  );
  t.match(await callJson(ada, "ack_messages", { message_ids: adaGot.messages.map((m) => m.id) }), {
    acknowledged: [/^msg_/],
  });

  // a group (created with the SDK: the MCP tools send to groups)
  const group = await sdk(reg.token).createGroup({ name: "pair", members: [bobId] });
  t.match(await callJson(ada, "send_group_message", { group_id: group.id, body: "to the group" }), {
    thread_id: group.thread_id,
  });
  const bobNext = await callJson<{ messages: { body: string }[]; acknowledged_previous: string[] }>(
    bob,
    "wait_for_messages",
    { timeout_seconds: 5 },
  );
  t.match(bobNext.messages, [{ body: "to the group" }]);
  t.same(bobNext.acknowledged_previous, [sent.id], "the next wait acknowledged the previous message");

  // the marketplace, and pay_and_send to a free agent (no wallet needed: nothing to pay)
  t.match(await callJson(bob, "marketplace", {}), { agents: [], payments: /no paying wallet/ });
  t.match(await callJson(bob, "pay_and_send", { to: reg.agent.id, body: "free" }), { body: "free" });
  t.match((await bob.listResources()).resources.map((r) => r.uri).sort(), ["flock://feed", "flock://threads"]);
  const threads = await bob.readResource({ uri: "flock://threads" });
  t.match(JSON.parse((threads.contents[0] as { text: string }).text), { threads: [{}] });
  const msgs = await bob.readResource({ uri: `flock://threads/${sent.thread_id}/messages` });
  t.match(JSON.parse((msgs.contents[0] as { text: string }).text), { messages: [{ body: "free" }] });
});

t.test("a wait not acknowledged gives the message again, with a higher delivery_count", async (t) => {
  const alice = sdk();
  await alice.register({ display_name: "Alice" });
  const carl = sdk();
  const carlReg = await carl.register({ display_name: "Carl" });
  const env = { FLOCK_URL: node.url, FLOCK_TOKEN: carlReg.token };
  const sent = await alice.send(carlReg.agent.id, "handle me");

  const first = await stdioClient(env, "carl-1");
  const a = await callJson<{ messages: { id: string; delivery_count: number }[] }>(first, "wait_for_messages", {
    timeout_seconds: 5,
  });
  t.match(a.messages, [{ id: sent.id, delivery_count: 1 }]);
  const b = await callJson<{ messages: { id: string; delivery_count: number }[]; unacknowledged: string[] }>(
    first,
    "wait_for_messages",
    {
      timeout_seconds: 5,
      ack_previous: false,
    },
  );
  t.match(b.messages, [{ id: sent.id, delivery_count: 2 }], "ack_previous=false: again, delivered twice");
  t.same(b.unacknowledged, [sent.id]);
  // the runtime dies before the next call: nothing acked it
  await first.close();

  const second = await stdioClient(env, "carl-2");
  t.teardown(() => second.close());
  const c = await callJson<{ messages: { id: string; delivery_count: number }[] }>(second, "wait_for_messages", {
    timeout_seconds: 5,
  });
  t.match(c.messages, [{ id: sent.id, delivery_count: 3 }], "a new server process gets it again");
  const d = await callJson<{ messages: unknown[]; acknowledged_previous: string[] }>(second, "wait_for_messages", {
    timeout_seconds: 1,
  });
  t.same(d.acknowledged_previous, [sent.id]);
  t.same(d.messages, [], "acknowledged by the next wait: gone");
  t.same(await carl.pending({ timeout: 0 }), [], "and gone for the SDK too");
});

t.test("a 429 and a 402 are tool errors that say what to do", async (t) => {
  const view = { caps: { privateKey: `0x${"11".repeat(32)}`, maxPerMessage: 0.1, maxTotal: 1 }, spent: () => 200_000n };
  const limited = toolError(new FlockError(429, "rate_limited", "too many moments", 12), view);
  t.equal(limited.isError, true);
  t.match(limited.content[0], { type: "text", text: /^rate limited: wait 12 seconds/ });
  const required = {
    x402Version: 2,
    accepts: [
      {
        scheme: "exact",
        network: "eip155:31337",
        asset: "0xA5e7",
        amount: "500000",
        payTo: "0xPAY",
        maxTimeoutSeconds: 60,
        extra: { name: "fUSD" },
      },
    ],
  };
  const paid = toolError(new PaymentRequiredError("price above cap", required), view);
  t.equal(paid.isError, true);
  const text = (paid.content[0] as { text: string }).text;
  for (const part of [
    "$0.5",
    "500000 atomic units",
    "0xA5e7",
    "fUSD",
    "eip155:31337",
    "to 0xPAY",
    "$0.1 per message",
    "$1 in total",
    "$0.8 left",
  ]) {
    t.ok(text.includes(part), `names ${part}`);
  }
  t.match(
    (
      toolError(new FlockError(402, "payment_required", "pay", undefined, required), {
        caps: undefined,
        spent: () => 0n,
      }).content[0] as { text: string }
    ).text,
    /no paying wallet.*nothing was signed/,
  );
  t.match(toolError(new Error("boom"), view), { isError: true, content: [{ text: "error: boom" }] });
});

t.test("the MCP Inspector's CLI lists the tools", async (t) => {
  const { stdout } = await promisify(execFile)(
    join(ROOT, "tools/node_modules/.bin/mcp-inspector"),
    ["--cli", process.execPath, BIN, "mcp", "--method", "tools/list"],
    {
      cwd: ROOT,
      env: { ...process.env, FLOCK_URL: node.url },
      timeout: 50_000,
    },
  );
  const listed = JSON.parse(stdout) as { tools: { name: string; inputSchema: { type: string } }[] };
  t.same(listed.tools.map((x) => x.name).sort(), TOOLS);
  t.ok(
    listed.tools.every((x) => x.inputSchema.type === "object"),
    "every tool has an object input schema",
  );
});
