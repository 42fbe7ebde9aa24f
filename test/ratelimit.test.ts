import t from "tap";
import { TEST_DATABASE_URL, TEST_REDIS_URL, uniqueName } from "./helpers/env.ts";
import { call, randomIp } from "./helpers/http.ts";
import { deletePrefix, dropSchema, startTestNode } from "./helpers/node.ts";
import { startProcess } from "./helpers/process.ts";

const register = (base: string, ip: string) =>
  call(base, "POST", "/v1/agents/register", { json: { display_name: "r" }, headers: { "x-forwarded-for": ip } });

for (const engine of ["redis", "memory"] as const) {
  t.test(`11th registration from one IP within a minute answers 429 (${engine})`, async (t) => {
    const node = await startTestNode(t, { engine });
    const ip = randomIp();
    for (let i = 1; i <= 10; i++) {
      const r = await register(node.url, ip);
      t.equal(r.status, 201, `registration ${i}`);
      t.equal(r.headers.get("ratelimit-policy"), '"register";q=10;w=60');
      t.match(r.headers.get("ratelimit"), new RegExp(`^"register";r=${10 - i};t=\\d+$`));
    }
    const r = await register(node.url, ip);
    t.equal(r.status, 429);
    t.same(Object.keys(r.body).sort(), ["error", "message", "retry_after"]);
    t.equal(r.body.error, "rate_limited");
    t.equal(r.body.retry_after, 6, "one token back in 60/10 seconds");
    t.equal(r.headers.get("retry-after"), "6");
    t.match(r.headers.get("ratelimit"), /^"register";r=0;t=6$/);
    t.equal((await register(node.url, randomIp())).status, 201, "another IP is not affected");
  });
}

t.test("the limit is shared by two server processes on one Redis", async (t) => {
  const schema = uniqueName("mp");
  const prefix = `flocktest:${uniqueName("mp")}:`;
  const env = {
    DATABASE_URL: TEST_DATABASE_URL,
    REDIS_URL: TEST_REDIS_URL,
    PG_SCHEMA: schema,
    REDIS_PREFIX: prefix,
    TRUST_PROXY: "1",
  };
  const a = await startProcess(env);
  t.teardown(() => a.stop());
  const b = await startProcess(env);
  t.teardown(async () => {
    await b.stop();
    await dropSchema(schema);
    await deletePrefix(prefix);
  });
  const ip = randomIp();
  const statuses: number[] = [];
  for (let i = 0; i < 10; i++) statuses.push((await register(i % 2 === 0 ? a.url : b.url, ip)).status);
  t.same(statuses, Array(10).fill(201));
  for (const node of [a, b]) {
    const r = await register(node.url, ip);
    t.equal(r.status, 429);
    t.equal(r.body.error, "rate_limited");
    t.ok(Number(r.headers.get("retry-after")) >= 1);
  }
});

t.test("a tight retry loop after 429 gets the IP banned, on every node", async (t) => {
  const a = await startTestNode(t, { env: { FLOCK_BAN_STRIKES: "5", FLOCK_BAN_SECONDS: "120" } });
  const b = await startTestNode(t, {
    schema: a.schema,
    prefix: a.prefix,
    env: { FLOCK_BAN_STRIKES: "5", FLOCK_BAN_SECONDS: "120" },
  });
  const ip = randomIp();
  for (let i = 0; i < 10; i++) t.equal((await register(a.url, ip)).status, 201);
  const seen: number[] = [];
  for (let i = 0; i < 6; i++) seen.push((await register(a.url, ip)).status);
  t.same(seen, [429, 429, 429, 429, 403, 403], "the 5th refusal in the window bans");
  const banned = await register(a.url, ip);
  t.equal(banned.status, 403);
  t.equal(banned.body.error, "ip_banned");
  t.ok(Number(banned.headers.get("retry-after")) > 100);
  t.equal(banned.body.retry_after, Number(banned.headers.get("retry-after")));
  // The ban reaches the other node too, even on routes without a limit of their own.
  let other = await call(b.url, "GET", "/v1/agents/me", { headers: { "x-forwarded-for": ip } });
  for (let i = 0; i < 50 && other.status !== 403; i++) {
    await new Promise((r) => setImmediate(r));
    other = await call(b.url, "GET", "/v1/agents/me", { headers: { "x-forwarded-for": ip } });
  }
  t.equal(other.status, 403);
  t.equal(other.body.error, "ip_banned");
  t.equal((await register(a.url, randomIp())).status, 201, "other addresses are unaffected");
  t.equal((await call(a.url, "GET", "/healthz", { headers: { "x-forwarded-for": ip } })).status, 200);
});

t.test("FLOCK_LIMITS_SCALE raises every limit for load tests", async (t) => {
  const node = await startTestNode(t, { engine: "memory", env: { FLOCK_LIMITS_SCALE: "3" } });
  const ip = randomIp();
  for (let i = 0; i < 30; i++) t.equal((await register(node.url, ip)).status, 201);
  const r = await register(node.url, ip);
  t.equal(r.status, 429);
  t.equal(r.headers.get("ratelimit-policy"), '"register";q=30;w=60');
});
