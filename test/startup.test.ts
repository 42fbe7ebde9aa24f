import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import t from "tap";
import { TEST_DATABASE_URL, TEST_REDIS_URL, uniqueName } from "./helpers/env.ts";
import { call, registerAgent } from "./helpers/http.ts";
import { deletePrefix, dropSchema } from "./helpers/node.ts";
import { runToExit, startProcess } from "./helpers/process.ts";
import { PrivateRedis } from "./helpers/private-servers.ts";
import { until } from "./helpers/wait.ts";
import { chooseUws, thisPlatform, UWS_NODE20_OLD_GLIBC } from "../runtime/uws.ts";

t.test("embedded default: no DATABASE_URL or REDIS_URL runs on PGlite and memory engines", async (t) => {
  const dir = mkdtempSync(join(tmpdir(), "flock-embedded-"));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const p = await startProcess({ DATA_DIR: dir });
  t.match(p.output(), /"engines":"memory","postgres":"embedded"/);
  t.match(p.output(), /native binding loaded/);
  const a = await registerAgent(p.url, "embedded");
  t.equal((await call(p.url, "GET", "/v1/agents/me", { token: a.token })).status, 200);
  const ready = await call(p.url, "GET", "/readyz");
  t.equal(ready.status, 200);
  t.same(ready.body, { status: "ready", checks: { postgres: "ok", memory: "ok" } });

  // Concurrent transactions on the one PGlite session: with several client connections their statements
  // interleaved ("portal does not exist", 500s). Forty mutual friend requests at once, each a transaction.
  const fleet = await Promise.all(Array.from({ length: 9 }, (_, i) => registerAgent(p.url, `emb${i}`)));
  const asks = fleet.flatMap((x, i) => fleet.slice(i + 1).map((y) => [x, y] as const)).slice(0, 20);
  const answers = await Promise.all(
    asks.flatMap(([x, y]) => [
      call(p.url, "POST", "/v1/friends/request", { token: x.token, json: { to: y.id } }),
      call(p.url, "POST", "/v1/friends/request", { token: y.token, json: { to: x.id } }),
    ]),
  );
  t.same(
    answers.filter((r) => r.status !== 200 && r.status !== 201).map((r) => r.status),
    [],
    "every request answered 200 or 201",
  );
  const friends = await call(p.url, "GET", "/v1/friends", { token: fleet[0]!.token });
  t.equal(friends.status, 200);
  t.equal(await p.stop("SIGTERM"), 0, "SIGTERM shuts down cleanly");

  // Data survives a restart on the same DATA_DIR.
  const again = await startProcess({ DATA_DIR: dir });
  t.teardown(() => again.stop());
  t.equal((await call(again.url, "GET", "/v1/agents/me", { token: a.token })).status, 200);
});

t.test("embedded default with PG_SCHEMA: the tables are made and used in that schema", async (t) => {
  const dir = mkdtempSync(join(tmpdir(), "flock-embedded-"));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const p = await startProcess({ DATA_DIR: dir, PG_SCHEMA: "fleet_a" });
  t.teardown(() => p.stop());
  // before: the migrations made the tables in fleet_a but every query ran in public ("relation does not exist": 500)
  const a = await registerAgent(p.url, "in a schema");
  t.equal((await call(p.url, "GET", "/v1/agents/me", { token: a.token })).status, 200);
  t.equal(
    (await call(p.url, "POST", "/v1/moments", { token: a.token, json: { content: "hello", visibility: "public" } }))
      .status,
    201,
  );
});

t.test("real servers: creates its schema and serves", async (t) => {
  const schema = uniqueName("boot");
  const prefix = `flocktest:${uniqueName("boot")}:`;
  const p = await startProcess({
    DATABASE_URL: TEST_DATABASE_URL,
    REDIS_URL: TEST_REDIS_URL,
    PG_SCHEMA: schema,
    REDIS_PREFIX: prefix,
  });
  t.teardown(async () => {
    await p.stop();
    await dropSchema(schema);
    await deletePrefix(prefix);
  });
  t.match(p.output(), /"engines":"redis","postgres":"server"/);
  t.match(p.output(), /migrations applied/);
  const ready = await call(p.url, "GET", "/readyz");
  t.same(ready.body, { status: "ready", checks: { postgres: "ok", redis: "ok" } });
});

t.test("an unreachable Postgres is a clear error and a non-zero exit", async (t) => {
  const r = await runToExit({ DATABASE_URL: "postgres://127.0.0.1:1/nope", REDIS_URL: TEST_REDIS_URL });
  t.not(r.code, 0);
  t.match(r.output, /cannot reach Postgres at postgres:\/\/127\.0\.0\.1:1\/nope/);
});

t.test("an unreachable Redis is a clear error and a non-zero exit", async (t) => {
  const schema = uniqueName("noredis");
  t.teardown(() => dropSchema(schema));
  const r = await runToExit({ DATABASE_URL: TEST_DATABASE_URL, PG_SCHEMA: schema, REDIS_URL: "redis://127.0.0.1:1" });
  t.not(r.code, 0);
  t.match(r.output, /cannot reach Redis at redis:\/\/127\.0\.0\.1:1/);
  t.notMatch(r.output, /Unhandled error event/, "no ioredis stack trace");
  t.equal(r.output.match(/failed to start/g)?.length, 1, "the fatal error is printed once");
});

t.test("a Redis outage under a running node: one structured log line per change of state", async (t) => {
  const redis = await PrivateRedis.start(t);
  const schema = uniqueName("redisout");
  const prefix = `flocktest:${uniqueName("redisout")}:`;
  const p = await startProcess({
    DATABASE_URL: TEST_DATABASE_URL,
    PG_SCHEMA: schema,
    REDIS_URL: redis.url,
    REDIS_PREFIX: prefix,
  });
  t.teardown(async () => {
    await p.stop();
    await dropSchema(schema);
  });
  const lines = () =>
    p
      .output()
      .split("\n")
      .filter((l) => /redis connection/.test(l));
  const logged = (what: string, n: number) =>
    until(() => lines().length >= n, { ms: 20_000, every: 50, what: () => `${what} logged:\n${p.output()}` });
  await redis.kill();
  await logged("lost", 2);
  // the node keeps reconnecting (every 50-250 ms) while it is down: each failure is an ioredis error event
  t.equal((await call(p.url, "GET", "/readyz")).status, 503);
  await redis.restart();
  await logged("restored", 4);
  const changes = lines().map((l) => JSON.parse(l) as { level: number; redis: string; msg: string });
  t.same(
    changes.map((c) => `${c.redis} ${c.msg}`).sort(),
    [
      "flock-cmd redis connection lost; reconnecting",
      "flock-cmd redis connection restored",
      "flock-sub redis connection lost; reconnecting",
      "flock-sub redis connection restored",
    ],
    "one pino line per connection and change, however many reconnects failed",
  );
  t.notMatch(p.output(), /Unhandled error event|ECONNREFUSED\n\s+at /, "no ioredis stack traces");
});

t.test("invalid configuration is refused by name", async (t) => {
  const r = await runToExit({ PORT: "not-a-port" });
  t.equal(r.code, 1);
  t.match(
    r.output,
    /invalid configuration:\n\s+PORT must be a whole number from 0 to 65535 \(got "not-a-port"\)/,
    "a plain sentence with the rule",
  );
  t.notMatch(r.output, /Invalid input|expected number|NaN/, "not the schema library's wording");
});

t.test("a started node prints one human line with its address on stderr, beside the JSON log", async (t) => {
  const dir = mkdtempSync(join(tmpdir(), "flock-line-"));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const p = await startProcess({ DATA_DIR: dir });
  t.teardown(() => p.stop());
  await until(() => p.output().includes("flock listening on "));
  t.match(p.output(), new RegExp(`^flock listening on http://127\\.0\\.0\\.1:${p.port}$`, "m"));
});

// v20.30 (Node 20 on glibc < 2.38) falls back to its slow pure-JS server when asked (UWS_USE_FALLBACK) or when its
// binary does not load: the node refuses to run on it. v20.57 has no such fallback: the variable changes nothing.
const uwsChoice = chooseUws(thisPlatform());
const oldBuild = "package" in uwsChoice && uwsChoice.package === UWS_NODE20_OLD_GLIBC;

t.test("refuses the pure-JS uWS fallback", { skip: oldBuild ? false : "v20.57 has no pure-JS fallback" }, async (t) => {
  const dir = mkdtempSync(join(tmpdir(), "flock-fallback-"));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const r = await runToExit({ UWS_USE_FALLBACK: "1", DATA_DIR: dir });
  t.equal(r.code, 1);
  t.match(r.output, /refusing to run on the slow pure-JS fallback/);
});

t.test(
  "on v20.57, UWS_USE_FALLBACK is ignored: the native binding serves",
  { skip: oldBuild ? "v20.30 is the build here" : false },
  async (t) => {
    const dir = mkdtempSync(join(tmpdir(), "flock-fallback-"));
    t.teardown(() => rmSync(dir, { recursive: true, force: true }));
    const p = await startProcess({ UWS_USE_FALLBACK: "1", DATA_DIR: dir });
    t.teardown(() => p.stop());
    t.match(
      p.output(),
      /"binding":"uws_[a-z0-9]+_[a-z0-9]+_\d+\.node","build":"uWebSockets\.js"/,
      "the native binding of v20.57 loaded",
    );
    t.equal((await call(p.url, "GET", "/healthz")).status, 200);
  },
);
