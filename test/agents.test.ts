import t from "tap";
import { asFull } from "../runtime/auth.ts";
import { call, randomIp, registerAgent } from "./helpers/http.ts";
import { startTestNode } from "./helpers/node.ts";

t.test("agents over HTTP (redis engines, real Postgres)", async (t) => {
  const node = await startTestNode(t);
  const base = node.url;

  t.test("register answers 201 with the agent and a working am_ token", async (t) => {
    const r = await call(base, "POST", "/v1/agents/register", {
      json: { display_name: "  Scout  ", description: "finds things" },
      headers: { "x-forwarded-for": randomIp() },
    });
    t.equal(r.status, 201);
    t.same(Object.keys(r.body).sort(), ["agent", "token"]);
    t.match(r.body.token, /^am_[0-9A-Za-z]{43}$/);
    t.same(Object.keys(r.body.agent).sort(), ["avatar_url", "created_at", "description", "display_name", "id"]);
    t.match(r.body.agent.id, /^[0-9]+$/);
    t.equal(r.body.agent.display_name, "Scout");
    t.equal(r.body.agent.description, "finds things");
    t.ok(!Number.isNaN(Date.parse(r.body.agent.created_at)));
    t.same(
      node.svc.auth.cached(r.body.token),
      asFull({ id: r.body.agent.id, kind: "agent", displayName: "Scout", avatarKey: null }),
      "the issuing node has the token cached (its first WebSocket upgrade waits for nothing)",
    );
    const me = await call(base, "GET", "/v1/agents/me", { token: r.body.token });
    t.equal(me.status, 200);
    t.has(me.body.agent, r.body.agent);
  });

  t.test("ids are time ordered", async (t) => {
    const a = await registerAgent(base, "a");
    const b = await registerAgent(base, "b");
    t.ok(BigInt(b.id) > BigInt(a.id));
  });

  t.test("only a hash of the token is stored", async (t) => {
    const a = await registerAgent(base, "hash");
    const rows = await node.svc.sql`select encode(hash, 'hex') as h from tokens where principal = ${a.id}`;
    t.equal(rows.length, 1);
    t.not(rows[0]!.h, a.token);
    t.equal(rows[0]!.h.length, 64);
  });

  t.test("patch updates the profile; public profile readable by others", async (t) => {
    const a = await registerAgent(base, "before");
    const b = await registerAgent(base, "other");
    const p = await call(base, "PATCH", "/v1/agents/me", { token: a.token, json: { display_name: "after" } });
    t.equal(p.status, 200);
    t.equal(p.body.agent.display_name, "after");
    const pub = await call(base, "GET", `/v1/agents/${a.id}`, { token: b.token });
    t.equal(pub.status, 200);
    t.equal(pub.body.agent.display_name, "after");
    const empty = await call(base, "PATCH", "/v1/agents/me", { token: a.token, json: {} });
    t.equal(empty.status, 400);
    t.equal(empty.body.error, "invalid_request");
    const missing = await call(base, "GET", "/v1/agents/123", { token: b.token });
    t.equal(missing.status, 404);
    t.equal(missing.body.error, "not_found");
    const garbage = await call(base, "GET", "/v1/agents/P12", { token: b.token });
    t.equal(garbage.status, 404);
  });

  t.test("rotating the token retires the old one at once", async (t) => {
    const a = await registerAgent(base, "rotor");
    t.equal((await call(base, "GET", "/v1/agents/me", { token: a.token })).status, 200);
    const r = await call(base, "POST", "/v1/agents/me/token", { token: a.token });
    t.equal(r.status, 200);
    t.match(r.body.token, /^am_/);
    t.not(r.body.token, a.token);
    const old = await call(base, "GET", "/v1/agents/me", { token: a.token });
    t.equal(old.status, 401);
    t.equal(old.body.error, "unauthorized");
    const fresh = await call(base, "GET", "/v1/agents/me", { token: r.body.token });
    t.equal(fresh.status, 200);
    t.equal(fresh.body.agent.id, a.id);
  });

  t.test("401 in the error shape for missing, malformed, unknown and expired tokens", async (t) => {
    const cases: [string, Record<string, string>][] = [
      ["missing", {}],
      ["not bearer", { authorization: "Basic abc" }],
      ["malformed", { authorization: "Bearer nope" }],
      ["unknown", { authorization: `Bearer am_${"x".repeat(43)}` }],
    ];
    for (const [name, headers] of cases) {
      const r = await call(base, "GET", "/v1/agents/me", { headers });
      t.equal(r.status, 401, name);
      t.equal(r.body.error, "unauthorized", name);
      t.type(r.body.message, "string", name);
    }
    const a = await registerAgent(base, "expiring");
    await node.svc.sql`update tokens set expires_at = now() - interval '1 second' where principal = ${a.id}`;
    await node.svc.auth.forget(a.id);
    const expired = await call(base, "GET", "/v1/agents/me", { token: a.token });
    t.equal(expired.status, 401);
    t.match(expired.body.message, /expired/);
  });

  t.test("bad input answers its status in the one error shape", async (t) => {
    const ip = { "x-forwarded-for": randomIp() };
    const badJson = await call(base, "POST", "/v1/agents/register", {
      body: "{nope",
      headers: { ...ip, "content-type": "application/json" },
    });
    t.equal(badJson.status, 400);
    t.equal(badJson.body.error, "invalid_request");
    const noType = await call(base, "POST", "/v1/agents/register", { body: '{"display_name":"x"}', headers: ip });
    t.equal(noType.status, 415);
    t.equal(noType.body.error, "unsupported_media_type");
    const wrongType = await call(base, "POST", "/v1/agents/register", {
      body: '{"display_name":"x"}',
      headers: { ...ip, "content-type": "text/plain" },
    });
    t.equal(wrongType.status, 415);
    const big = await call(base, "POST", "/v1/agents/register", {
      json: { display_name: "x", description: "y".repeat(1024 * 1024 + 10) },
      headers: ip,
    });
    t.equal(big.status, 413);
    t.equal(big.body.error, "payload_too_large");
    const longName = await call(base, "POST", "/v1/agents/register", {
      json: { display_name: "n".repeat(65) },
      headers: ip,
    });
    t.equal(longName.status, 400);
    t.equal(longName.body.field, "display_name");
    const blank = await call(base, "POST", "/v1/agents/register", { json: { display_name: "   " }, headers: ip });
    t.equal(blank.status, 400);
    t.equal(blank.body.field, "display_name");
    const longDesc = await call(base, "POST", "/v1/agents/register", {
      json: { display_name: "ok", description: "d".repeat(501) },
      headers: ip,
    });
    t.equal(longDesc.status, 400);
    t.equal(longDesc.body.field, "description");
    const unknown = await call(base, "GET", "/v1/nothing-here");
    t.equal(unknown.status, 404);
    t.equal(unknown.body.error, "not_found");
    const wrongMethod = await call(base, "PUT", "/v1/agents/me/token");
    t.equal(wrongMethod.status, 405);
    t.equal(wrongMethod.body.error, "method_not_allowed");
    t.match(wrongMethod.headers.get("allow"), /POST/);
  });
});
