// Scoped, named tokens (issue 53), over real nodes and sockets: each scope lets through a route that needs it and
// refuses one that needs another (403 insufficient_scope naming it); a token never mints a wider one; revoking one
// token leaves the others working and is refused at once on every node, its live WebSockets closed 4401; a read-only
// socket receives and acks but may not type; full tokens (registration's) keep doing everything, and rotation
// replaces only them; the bound on named tokens and the creation rate limit hold; an MCP server opened with a
// read-only token offers only reading tools (the official MCP client).
import { Client as McpClient } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import t, { type Test } from "tap";
import { hashToken, newToken } from "../runtime/tokens.ts";
import { MAX_TOKENS_PER_PRINCIPAL } from "../schema/tokens.ts";
import { flock } from "./helpers/cli.ts";
import { call, registerAgent, type Registered } from "./helpers/http.ts";
import { ensureClientBuilt, stdioClient } from "./helpers/mcp.ts";
import { startTestNode } from "./helpers/node.ts";
import { until } from "./helpers/wait.ts";
import { Client } from "./messaging-helpers.ts";

const PAY_TO = "0x52908400098527886E0F7030069857D2E4169EE7";

/** A named token of `who` with `scopes`, minted with `by` (its full token unless told). */
async function mint(base: string, who: Registered, scopes: string[], name = "t", by = who.token) {
  const r = await call(base, "POST", "/v1/tokens", { token: by, json: { name, scopes } });
  if (r.status !== 201) throw new Error(`mint failed: ${r.status} ${r.text}`);
  return r.body as { token: string; info: { id: string; name: string; scopes: string[] } };
}

/** The answer is 403 insufficient_scope naming `scope`, in the one error shape. */
function refused(t: Test, r: { status: number; body: any }, scope: string, what: string) {
  t.equal(r.status, 403, `${what}: 403`);
  t.match(r.body, { error: "insufficient_scope", scope, message: String }, `${what}: names ${scope}`);
}

t.test("each scope lets through what needs it and nothing that needs another", async (t) => {
  const node = await startTestNode(t);
  const base = node.url;
  const a = await registerAgent(base, "Ann");
  const b = await registerAgent(base, "Ben");
  const read = (await mint(base, a, ["read"])).token;
  const msgs = (await mint(base, a, ["messages:write"])).token;
  const moments = (await mint(base, a, ["moments:write"])).token;
  const social = (await mint(base, a, ["social:write"])).token;
  const paying = (await mint(base, a, ["messages:write", "payments"])).token;

  // read
  t.equal((await call(base, "GET", "/v1/moments/feed", { token: read })).status, 200, "read: the feed");
  t.equal((await call(base, "GET", "/v1/threads", { token: read })).status, 200, "read: threads");
  refused(t, await call(base, "GET", "/v1/moments/feed", { token: msgs }), "read", "messages:write reads the feed");

  // messages:write
  const sent = await call(base, "POST", "/v1/messages", { token: msgs, json: { to: b.id, body: "hi" } });
  t.equal(sent.status, 201, "messages:write: a send");
  refused(
    t,
    await call(base, "POST", "/v1/messages", { token: read, json: { to: b.id, body: "hi" } }),
    "messages:write",
    "read sends",
  );
  refused(
    t,
    await call(base, "POST", "/v1/messages", { token: moments, json: { to: b.id, body: "hi" } }),
    "messages:write",
    "moments:write sends",
  );

  // moments:write
  const posted = await call(base, "POST", "/v1/moments", {
    token: moments,
    json: { content: "first light", visibility: "public" },
  });
  t.equal(posted.status, 201, "moments:write: a moment");
  refused(
    t,
    await call(base, "POST", "/v1/moments", { token: social, json: { content: "x", visibility: "public" } }),
    "moments:write",
    "social:write posts",
  );
  refused(
    t,
    await call(base, "DELETE", `/v1/moments/${posted.body.id}`, { token: read }),
    "moments:write",
    "read deletes",
  );

  // social:write
  const like = await call(base, "POST", `/v1/moments/${posted.body.id}/like`, { token: social });
  t.ok(like.status >= 200 && like.status < 300, `social:write: a like (${like.status})`);
  const friend = await call(base, "POST", "/v1/friends/request", { token: social, json: { to: b.id } });
  t.equal(friend.status, 201, "social:write: a friend request");
  refused(
    t,
    await call(base, "POST", `/v1/moments/${posted.body.id}/like`, { token: msgs }),
    "social:write",
    "messages:write likes",
  );
  refused(
    t,
    await call(base, "POST", "/v1/groups", { token: moments, json: { name: "g", members: [] } }),
    "social:write",
    "moments:write makes a group",
  );

  // payments: a send to a paid agent needs it on top of messages:write (refused before any 402)
  const seller = await registerAgent(base, "Seller");
  const on = await call(base, "PATCH", "/v1/agents/me", {
    token: seller.token,
    json: { x402_enabled: true, price: 0.05, pay_to: PAY_TO },
  });
  t.equal(on.status, 200);
  refused(
    t,
    await call(base, "POST", "/v1/messages", { token: msgs, json: { to: seller.id, body: "paid?" } }),
    "payments",
    "a paid send without payments",
  );
  const unpaid = await call(base, "POST", "/v1/messages", { token: paying, json: { to: seller.id, body: "paid?" } });
  t.equal(unpaid.status, 402, "with payments, the paid send goes on to ask for payment");

  // admin: no principal may hold it yet, so none can mint it (a full token neither)
  refused(
    t,
    await call(base, "POST", "/v1/tokens", { token: a.token, json: { name: "mod", scopes: ["admin"] } }),
    "admin",
    "minting admin",
  );

  // full: the account itself (profile, rotation) needs every scope
  refused(t, await call(base, "POST", "/v1/agents/me/token", { token: paying }), "full", "a scoped token rotates");
  refused(
    t,
    await call(base, "PATCH", "/v1/agents/me", { token: read, json: { description: "x" } }),
    "full",
    "a scoped token edits the profile",
  );
  const current = await call(base, "GET", "/v1/tokens/current", { token: paying });
  t.match(current.body, { full: false, scopes: ["messages:write", "payments"] }, "current names the token's scopes");
  refused(t, await call(base, "GET", "/v1/tokens", { token: paying }), "read", "listing needs read");
});

t.test("a token never mints or revokes a wider one; full tokens do everything", async (t) => {
  const node = await startTestNode(t);
  const base = node.url;
  const a = await registerAgent(base, "Ann");
  const reader = await mint(base, a, ["read"], "reader");
  const narrower = await mint(base, a, ["read"], "reader 2", reader.token);
  t.same(narrower.info.scopes, ["read"], "a read token mints a read token");
  refused(
    t,
    await call(base, "POST", "/v1/tokens", {
      token: reader.token,
      json: { name: "w", scopes: ["read", "messages:write"] },
    }),
    "messages:write",
    "a read token mints a wider one",
  );
  const writer = await mint(base, a, ["read", "messages:write"], "writer");
  refused(
    t,
    await call(base, "DELETE", `/v1/tokens/${writer.info.id}`, { token: reader.token }),
    "messages:write",
    "a read token revokes a wider one",
  );
  const bad = await call(base, "POST", "/v1/tokens", { token: a.token, json: { name: "x", scopes: ["everything"] } });
  t.equal(bad.status, 400, "an unknown scope is a 400");
  t.equal((await call(base, "POST", "/v1/tokens", { token: a.token, json: { name: "x", scopes: [] } })).status, 400);

  // the registration token is full: every route, every scope, listing with no secrets
  const full = await call(base, "GET", "/v1/tokens/current", { token: a.token });
  t.same(full.body, {
    id: null,
    name: null,
    full: true,
    scopes: ["read", "messages:write", "moments:write", "social:write", "payments"],
  });
  const list = await call(base, "GET", "/v1/tokens", { token: a.token });
  t.same(
    list.body.tokens.map((x: { name: string }) => x.name),
    ["reader", "reader 2", "writer"],
    "the named tokens, oldest first",
  );
  t.notOk(list.text.includes(reader.token.slice(3)), "the list never carries a token");
  t.same(Object.keys(list.body.tokens[0]).sort(), ["created_at", "id", "last_used_at", "name", "scopes"]);
  // a token's first use (a lookup) is written as its last use
  await until(
    async () => (await call(base, "GET", "/v1/tokens", { token: a.token })).body.tokens[0].last_used_at !== null,
    { ms: 3000, every: 50, what: "the reader's last_used_at" },
  );
  t.pass("last_used_at is set once the token was used");

  const b = await registerAgent(base, "Ben");
  t.equal((await call(base, "POST", "/v1/messages", { token: a.token, json: { to: b.id, body: "hi" } })).status, 201);
  const m = await call(base, "POST", "/v1/moments", { token: a.token, json: { content: "x", visibility: "public" } });
  t.equal(m.status, 201);
  t.equal((await call(base, "POST", "/v1/friends/request", { token: a.token, json: { to: b.id } })).status, 201);

  // rotation replaces the full token only: the named tokens keep working
  const rotated = await call(base, "POST", "/v1/agents/me/token", { token: a.token });
  t.equal(rotated.status, 200);
  t.equal((await call(base, "GET", "/v1/agents/me", { token: a.token })).status, 401, "the old full token is gone");
  t.equal((await call(base, "GET", "/v1/moments/feed", { token: reader.token })).status, 200, "a named one stays");
  t.match((await call(base, "GET", "/v1/tokens/current", { token: rotated.body.token })).body, { full: true });
});

t.test("revoking one token: refused at once on every node, its live sockets closed, the others kept", async (t) => {
  const one = await startTestNode(t);
  const two = await startTestNode(t, { schema: one.schema, prefix: one.prefix });
  const a = await registerAgent(one.url, "Ann");
  const b = await registerAgent(one.url, "Ben");
  const doomed = await mint(one.url, a, ["read"], "doomed");
  const kept = await mint(one.url, a, ["read"], "kept");
  // both nodes have both cached
  for (const n of [one, two])
    for (const tok of [doomed.token, kept.token])
      t.equal((await call(n.url, "GET", "/v1/threads", { token: tok })).status, 200);
  const onOne = await Client.open(one.url, { token: doomed.token });
  const onTwo = await Client.open(two.url, { protocols: [`bearer.${doomed.token}`] });
  const keptWs = await Client.open(two.url, { token: kept.token });
  t.teardown(() => {
    onOne.close();
    onTwo.close();
    keptWs.close();
  });
  await Promise.all([onOne.nextOfType("ready"), onTwo.nextOfType("ready"), keptWs.nextOfType("ready")]);

  // the read-only socket receives and acks, but may not type
  const sent = await call(one.url, "POST", "/v1/messages", { token: b.token, json: { to: a.id, body: "hello" } });
  t.equal(sent.status, 201);
  const got = (await keptWs.next((f) => f.type === "message" && f.message.id === sent.body.id)).message;
  keptWs.send({ type: "ack", id: got.id, ref: 1 });
  t.match(await keptWs.nextOfType("ack"), { id: got.id, ref: 1 }, "a read token acks");
  keptWs.send({ type: "typing", thread_id: got.thread_id, state: "start", ref: 2 });
  t.match(
    await keptWs.nextOfType("error"),
    { error: "insufficient_scope", scope: "messages:write" },
    "typing needs messages:write",
  );
  t.equal(keptWs.closed, null, "the socket stays open after a refused frame");

  const revoked = await call(one.url, "DELETE", `/v1/tokens/${doomed.info.id}`, { token: a.token });
  t.equal(revoked.status, 204);
  const [c1, c2] = await Promise.all([onOne.waitClose(), onTwo.waitClose()]);
  t.equal(c1.code, 4401, "its socket on the revoking node is closed 4401");
  t.equal(c2.code, 4401, "and on the other node");
  for (const n of [one, two]) {
    t.equal((await call(n.url, "GET", "/v1/threads", { token: doomed.token })).status, 401, "refused at once");
    t.equal((await call(n.url, "GET", "/v1/threads", { token: kept.token })).status, 200, "the other works");
  }
  t.equal((await call(one.url, "GET", "/v1/agents/me", { token: a.token })).status, 200, "the full token works");
  await new Promise((r) => setTimeout(r, 300));
  t.equal(keptWs.closed, null, "the other token's socket stays open");
  t.equal((await call(one.url, "DELETE", `/v1/tokens/${doomed.info.id}`, { token: a.token })).status, 404, "gone");
  const other = await registerAgent(one.url, "Other");
  t.equal(
    (await call(one.url, "DELETE", `/v1/tokens/${kept.info.id}`, { token: other.token })).status,
    404,
    "another principal's token is not found",
  );
  t.equal((await call(one.url, "DELETE", "/v1/tokens/nope", { token: a.token })).status, 404);
  // a token revokes itself
  t.equal((await call(one.url, "DELETE", `/v1/tokens/${kept.info.id}`, { token: kept.token })).status, 204);
  await keptWs.waitClose();
  t.equal(keptWs.closed?.code, 4401);
});

t.test("at most 50 named tokens a principal; creation is rate limited", async (t) => {
  const node = await startTestNode(t);
  const base = node.url;
  const a = await registerAgent(base, "Ann");
  for (let i = 0; i < MAX_TOKENS_PER_PRINCIPAL - 1; i++) {
    await node.svc.sql`
      insert into tokens (hash, principal, id, name, scopes)
      values (${hashToken(newToken("agent"))}, ${a.id}, ${`tok_${1000 + i}`}, ${`n${i}`}, ${["read"]}::text[])`;
  }
  t.equal(
    (await call(base, "POST", "/v1/tokens", { token: a.token, json: { name: "50th", scopes: ["read"] } })).status,
    201,
  );
  const over = await call(base, "POST", "/v1/tokens", { token: a.token, json: { name: "51st", scopes: ["read"] } });
  t.equal(over.status, 409, "the 51st is refused");
  t.equal(over.body.error, "conflict");
  t.equal((await call(base, "GET", "/v1/tokens", { token: a.token })).body.tokens.length, MAX_TOKENS_PER_PRINCIPAL);

  const b = await registerAgent(base, "Ben");
  const answers: number[] = [];
  for (let i = 0; i < 11; i++)
    answers.push(
      (await call(base, "POST", "/v1/tokens", { token: b.token, json: { name: `r${i}`, scopes: ["read"] } })).status,
    );
  t.same(answers.slice(0, 10), Array(10).fill(201), "10 a minute");
  t.equal(answers[10], 429, "the 11th within the minute is rate limited");
});

t.test("an MCP server opened with a read-only token offers only reading tools", async (t) => {
  const node = await startTestNode(t);
  const a = await registerAgent(node.url, "Ann");
  const reader = await mint(node.url, a, ["read"]);
  const connect = async (token: string) => {
    const transport = new StreamableHTTPClientTransport(new URL(`${node.url}/v1/mcp`), {
      requestInit: { headers: { authorization: `Bearer ${token}` } },
    });
    const client = new McpClient({ name: "scoped-test", version: "1.0.0" });
    await client.connect(transport);
    t.teardown(() => client.close());
    return Object.assign(client, { sessionId: transport.sessionId });
  };
  const fullMcp = await connect(a.token);
  const fullTools = (await fullMcp.listTools()).tools.map((x) => x.name);
  const borrowed = await call(node.url, "POST", "/v1/mcp", {
    token: reader.token,
    headers: { "mcp-session-id": fullMcp.sessionId!, accept: "application/json, text/event-stream" },
    json: { jsonrpc: "2.0", id: 9, method: "tools/list" },
  });
  t.equal(borrowed.status, 404, "a read token cannot use the full token's session");
  const readTools = (await (await connect(reader.token)).listTools()).tools.map((x) => x.name);
  t.ok(fullTools.includes("send_message") && fullTools.includes("post_moment"), "a full token: every tool");
  for (const name of ["whoami", "read_feed", "list_threads", "read_thread", "wait_for_messages", "ack_messages"])
    t.ok(readTools.includes(name), `read-only offers ${name}`);
  for (const name of [
    "send_message",
    "send_group_message",
    "post_moment",
    "like",
    "comment",
    "friend_request",
    "pay_and_send",
  ])
    t.notOk(readTools.includes(name), `read-only does not offer ${name}`);
  t.ok(readTools.length < fullTools.length);
});

t.test("flockctl token create/list/show/revoke, and flockctl mcp with a read-only token", async (t) => {
  await ensureClientBuilt();
  const node = await startTestNode(t, { engine: "memory" });
  const a = await registerAgent(node.url, "Ann");
  const env = { FLOCK_URL: node.url, FLOCK_TOKEN: a.token };
  const made = await flock(["token", "create", "reader", "--scopes", "read", "--json"], env);
  t.equal(made.code, 0, made.stderr);
  const { token, info } = JSON.parse(made.stdout) as { token: string; info: { id: string; scopes: string[] } };
  t.same(info.scopes, ["read"]);
  t.equal((await flock(["token", "create", "x", "--scopes", "everything"], env)).code, 2, "a bad scope is usage");
  const shown = await flock(["token", "show", "--json"], { ...env, FLOCK_TOKEN: token });
  t.match(JSON.parse(shown.stdout), { id: info.id, name: "reader", full: false, scopes: ["read"] });
  const listed = await flock(["token", "list"], env);
  t.match(listed.stdout, new RegExp(`${info.id}\\s+reader\\s+\\[read\\]`));
  const post = await flock(["post", "hi", "--visibility", "public"], { ...env, FLOCK_TOKEN: token });
  t.not(post.code, 0, "a read token cannot post");
  t.match(post.stderr, /moments:write/, "and says which scope it lacks");

  const mcp = await stdioClient({ FLOCK_URL: node.url, FLOCK_TOKEN: token }, "reader");
  t.teardown(() => mcp.close());
  const tools = (await mcp.listTools()).tools.map((x) => x.name);
  t.ok(tools.includes("read_feed") && tools.includes("wait_for_messages"), "reading tools");
  t.notOk(tools.includes("send_message") || tools.includes("post_moment"), "no writing tool over stdio either");

  const revoked = await flock(["token", "revoke", info.id], env);
  t.equal(revoked.code, 0, revoked.stderr);
  t.equal((await flock(["token", "show"], { ...env, FLOCK_TOKEN: token })).code, 3, "the revoked token: unauthorized");
});
