// Hostile inputs that once answered 500: each must be a 400 in the one error shape, and must not be free to repeat.
import t from "tap";
import { MAX_JSON_VALUES } from "../runtime/http/validate.ts";
import { POLICIES } from "../runtime/limits/policies.ts";
import { call, randomIp, registerAgent } from "./helpers/http.ts";
import { startTestNode } from "./helpers/node.ts";

/** `{"a":{"a":...{"a":"\u0000"}...}}`, `levels` objects deep. */
const nestedObjects = (levels: number) => '{"a":'.repeat(levels) + '"\\u0000"' + "}".repeat(levels);
/** `[[[..."\u0000"...]]]`, `levels` arrays deep. */
const nestedArrays = (levels: number) => "[".repeat(levels) + '"\\u0000"' + "]".repeat(levels);

t.test("deeply nested JSON", async (t) => {
  const node = await startTestNode(t, { engine: "memory" });
  const agent = await registerAgent(node.url, "deep");

  t.test("2,000 levels with a NUL leaf, unauthenticated: 400 invalid_request, not 500", async (t) => {
    for (const body of [nestedObjects(2000), nestedArrays(2000), nestedObjects(100_000)]) {
      const r = await call(node.url, "POST", "/v1/agents/register", {
        body,
        headers: { "content-type": "application/json", "x-forwarded-for": randomIp() },
      });
      t.equal(r.status, 400, `${body.length} bytes`);
      t.equal(r.body.error, "invalid_request");
      t.type(r.body.message, "string");
    }
  });

  t.test("too deep without a NUL is refused as well, on an authenticated route too", async (t) => {
    const r = await call(node.url, "POST", "/v1/moments", {
      token: agent.token,
      body: `{"content":"x","visibility":"public","extra":${nestedArrays(200).replace('"\\u0000"', "1")}}`,
      headers: { "content-type": "application/json" },
    });
    t.equal(r.status, 400);
    t.equal(r.body.error, "invalid_request");
    t.match(r.body.message, /deep/);
  });

  t.test("too many values, or too deep, are refused from the bytes before they are parsed", async (t) => {
    const many = `{"display_name":"x","extra":[${Array(MAX_JSON_VALUES).fill("1").join(",")}]}`;
    const r = await call(node.url, "POST", "/v1/agents/register", {
      body: many,
      headers: { "content-type": "application/json", "x-forwarded-for": randomIp() },
    });
    t.equal(r.status, 400);
    t.match(r.body.message, /too many values/);
    // commas and brackets inside strings are not structure
    const inString = JSON.stringify({
      display_name: "x",
      description: ",".repeat(MAX_JSON_VALUES + 1) + "[".repeat(100) + '\\"',
    });
    const ok = await call(node.url, "POST", "/v1/agents/register", {
      body: inString,
      headers: { "content-type": "application/json", "x-forwarded-for": randomIp() },
    });
    t.not(
      ok.body.message ?? "",
      /too many values|nested too deeply/,
      `a string of commas and brackets is text: ${ok.status}`,
    );
    const deep = "[".repeat(520_000) + "]".repeat(520_000);
    const d = await call(node.url, "POST", "/v1/moments", {
      token: agent.token,
      body: deep,
      headers: { "content-type": "application/json" },
    });
    t.equal(d.status, 400);
    t.match(d.body.message, /deep/);
  });

  t.test("ordinary nesting still works, and a NUL deep inside a known field is still named", async (t) => {
    const r = await call(node.url, "POST", "/v1/agents/register", {
      json: { display_name: "x\u0000" },
      headers: { "x-forwarded-for": randomIp() },
    });
    t.equal(r.status, 400);
    t.equal(r.body.field, "display_name");
    const ok = await call(node.url, "POST", "/v1/groups", { token: agent.token, json: { name: "g", members: [] } });
    t.equal(ok.status, 201);
  });

  t.test("invalid bodies use up the route's per-IP limit", async (t) => {
    const ip = randomIp();
    const statuses: number[] = [];
    const limit = POLICIES.register.limit;
    for (let i = 0; i <= limit; i++) {
      const r = await call(node.url, "POST", "/v1/agents/register", {
        body: nestedObjects(2000),
        headers: { "content-type": "application/json", "x-forwarded-for": ip },
      });
      statuses.push(r.status);
    }
    t.same(statuses.slice(0, limit), Array(limit).fill(400));
    t.equal(statuses[limit], 429, "one request more than the limit, from one address within its window, is refused");
  });
});

t.test("GET /v1/agents/marketplace?before=abc is a 400, not a 500", async (t) => {
  const node = await startTestNode(t, { engine: "memory" });
  const agent = await registerAgent(node.url, "m");
  for (const before of ["abc", "", "99999999999999999999", "-1", "1.5", "\u0000"]) {
    const r = await call(node.url, "GET", `/v1/agents/marketplace?before=${encodeURIComponent(before)}`, {
      token: agent.token,
    });
    t.equal(r.status, 400, JSON.stringify(before));
    t.equal(r.body.error, "invalid_request");
    t.equal(r.body.field, "before");
  }
  const big = await call(node.url, "GET", "/v1/agents/marketplace?before=9999999999999999999", { token: agent.token });
  t.equal(big.status, 400, "above the largest 64-bit id");
  const ok = await call(node.url, "GET", "/v1/agents/marketplace?before=9223372036854775807", { token: agent.token });
  t.equal(ok.status, 200);
});

t.test("a NUL in a query parameter is a 400 naming it, not a 500 from Postgres", async (t) => {
  const node = await startTestNode(t, { engine: "memory" });
  const agent = await registerAgent(node.url, "q");
  for (const q of ["%00", "a%00b"]) {
    const r = await call(node.url, "GET", `/v1/agents/marketplace?q=${q}`, { token: agent.token });
    t.equal(r.status, 400, `q=${q}`);
    t.equal(r.body.error, "invalid_request");
    t.equal(r.body.field, "q");
  }
  const surrogate = await call(node.url, "GET", "/v1/agents/marketplace?q=%ED%A0%80", { token: agent.token });
  t.equal(surrogate.status, 200, "an undecodable escape is read as U+FFFD");
});

t.test("a NUL in a path parameter is a 404, not a 500 from Postgres", async (t) => {
  const node = await startTestNode(t, { engine: "memory" });
  const agent = await registerAgent(node.url, "owner");
  const g = await call(node.url, "POST", "/v1/groups", { token: agent.token, json: { name: "g" } });
  t.equal(g.status, 201);
  for (const member of ["%00", "x%00", `${agent.id}%00`]) {
    const r = await call(node.url, "DELETE", `/v1/groups/${g.body.group.id}/members/${member}`, { token: agent.token });
    t.equal(r.status, 404, member);
    t.equal(r.body.error, "not_found");
  }
  const self = await call(node.url, "GET", `/v1/agents/${agent.id}%00`, { token: agent.token });
  t.equal(self.status, 404);
});
