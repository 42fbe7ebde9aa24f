// What a new user hits at start: two nodes on one DATA_DIR or one port, a database that does not exist yet,
// settings that are empty or of the wrong kind, and a fatal error printed once.
import { mkdtempSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import postgres from "postgres";
import t from "tap";
import { loadConfig } from "../runtime/config.ts";
import { lockDataDir } from "../runtime/db/data-lock.ts";
import { TEST_DATABASE_URL, TEST_REDIS_URL, uniqueName } from "./helpers/env.ts";
import { call, registerAgent } from "./helpers/http.ts";
import { deletePrefix } from "./helpers/node.ts";
import { freePort } from "./helpers/private-servers.ts";
import { runToExit, startProcess } from "./helpers/process.ts";

const tempDir = (t: { teardown(fn: () => void): void }, label: string) => {
  const dir = mkdtempSync(join(tmpdir(), `flock-${label}-`));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
};

t.test("a second node on the same DATA_DIR fails at once, naming the holder", async (t) => {
  const dir = tempDir(t, "lock");
  const first = await startProcess({ DATA_DIR: dir });
  t.teardown(() => first.stop());
  const a = await registerAgent(first.url, "first");
  const started = performance.now();
  const second = await runToExit({ DATA_DIR: dir });
  t.equal(second.code, 1);
  t.match(second.output, new RegExp(`DATA_DIR .* is in use by another Flock process \\(pid ${first.child.pid}\\)`));
  t.ok(performance.now() - started < 15_000, "fails fast");
  t.equal((await call(first.url, "GET", "/v1/agents/me", { token: a.token })).status, 200, "the first keeps serving");
  t.equal(await first.stop("SIGTERM"), 0);
  // the lock is released on a clean stop: the next start takes the directory and sees the data
  const again = await startProcess({ DATA_DIR: dir });
  t.teardown(() => again.stop());
  t.equal((await call(again.url, "GET", "/v1/agents/me", { token: a.token })).status, 200);
});

t.test("a lock left by a dead process is taken over; a live holder is refused", async (t) => {
  const dir = tempDir(t, "stale");
  writeFileSync(join(dir, "flock.lock"), "999999999\n"); // no such process
  const lock = lockDataDir(dir);
  t.throws(() => lockDataDir(dir), /in use by another Flock process \(pid \d+\)/, "held by this live process");
  lock.release();
  lockDataDir(dir).release();
});

t.test("a second node on the same port fails at once instead of sharing it", async (t) => {
  const first = await startProcess({ DATA_DIR: tempDir(t, "porta"), PORT: String(await freePort()) });
  t.teardown(() => first.stop());
  const second = await runToExit({ DATA_DIR: tempDir(t, "portb"), PORT: String(first.port) });
  t.equal(second.code, 1);
  t.match(second.output, new RegExp(`cannot listen on 127\\.0\\.0\\.1:${first.port}`));
  // every request still reaches the first node: one agent's own token answers 200 every time
  const a = await registerAgent(first.url, "solo");
  for (let i = 0; i < 6; i++) t.equal((await call(first.url, "GET", "/v1/agents/me", { token: a.token })).status, 200);
});

t.test("a port taken by another program fails at once", async (t) => {
  const srv = createServer();
  await new Promise<void>((r) => srv.listen(0, "127.0.0.1", () => r()));
  t.teardown(() => srv.close());
  const port = (srv.address() as { port: number }).port;
  const dir = tempDir(t, "taken");
  const r = await runToExit({ DATA_DIR: dir, PORT: String(port) });
  t.equal(r.code, 1);
  t.match(r.output, new RegExp(`cannot listen on 127\\.0\\.0\\.1:${port}: the port is in use .*set PORT`));
  t.same(readdirSync(dir), [], "checked before anything was created: the embedded database was never made");
  t.notMatch(r.output, /embedded Postgres|migrations applied/, "nor started or migrated");
  t.equal(r.output.match(/failed to start/g)?.length, 1, "one message");
});

t.test("a HOST that is not this machine's fails before anything is created", async (t) => {
  const dir = tempDir(t, "nothost");
  const r = await runToExit({ DATA_DIR: dir, HOST: "192.0.2.1", PORT: String(await freePort()) });
  t.equal(r.code, 1);
  t.match(
    r.output,
    /cannot listen on 192\.0\.2\.1:\d+: the address is not one of this machine's; .*set PORT \(and HOST\)/,
  );
  t.same(readdirSync(dir), []);
});

t.test("real mode creates a database that does not exist yet", async (t) => {
  const name = uniqueName("newdb");
  const url = new URL(TEST_DATABASE_URL);
  url.pathname = `/${name}`;
  const prefix = `flocktest:${name}:`;
  const admin = new URL(TEST_DATABASE_URL);
  admin.pathname = "/postgres";
  t.teardown(async () => {
    const sql = postgres(admin.toString(), { max: 1, onnotice: () => {} });
    await sql.unsafe(`drop database if exists "${name}" with (force)`).catch(() => {});
    await sql.end();
    await deletePrefix(prefix);
  });
  const p = await startProcess({ DATABASE_URL: url.toString(), REDIS_URL: TEST_REDIS_URL, REDIS_PREFIX: prefix });
  t.teardown(() => p.stop());
  t.equal((await registerAgent(p.url, "newdb")).id.length > 0, true);
});

t.test("a database the role may not create: the exact command to run", async (t) => {
  const role = uniqueName("nocreate");
  const admin = postgres(TEST_DATABASE_URL, { max: 1, onnotice: () => {} });
  await admin.unsafe(`create role "${role}" login nocreatedb`);
  t.teardown(async () => {
    await admin.unsafe(`drop role if exists "${role}"`);
    await admin.end();
  });
  const url = new URL(TEST_DATABASE_URL);
  url.username = role;
  url.pathname = `/${role}_db`;
  const r = await runToExit({ DATABASE_URL: url.toString(), REDIS_URL: TEST_REDIS_URL });
  t.equal(r.code, 1);
  t.match(r.output, new RegExp(`create it with: createdb -h 127\\.0\\.0\\.1 -p 5432 -U ${role} ${role}_db`));
  t.equal(r.output.match(/failed to start/g)?.length, 1, "the fatal error is printed once");
});

t.test("configuration: empty PORT and non-Postgres URLs are errors", async (t) => {
  t.throws(() => loadConfig({ PORT: "" }), /PORT is set but empty/);
  t.throws(() => loadConfig({ PORT: "  " }), /PORT is set but empty/);
  t.throws(
    () => loadConfig({ DATABASE_URL: "mysql://localhost/x" }),
    /DATABASE_URL: must be a postgres:\/\/ or postgresql:\/\/ URL/,
  );
  t.throws(() => loadConfig({ REDIS_URL: "http://localhost:6379" }), /REDIS_URL: must be a redis/);
  t.equal(loadConfig({ DATABASE_URL: "postgresql://u@h/db" }).DATABASE_URL, "postgresql://u@h/db");
  t.equal(loadConfig({}).PORT, 8080, "unset PORT is the default");
  t.equal(loadConfig({ LOG_LEVEL: "" }).LOG_LEVEL, "info", "an empty optional setting still means its default");
  const r = await runToExit({ PORT: "" });
  t.equal(r.code, 1);
  t.match(r.output, /invalid configuration:\n\s+PORT is set but empty/);
});

t.test("configuration errors are plain sentences naming the rule, not the schema library's wording", async (t) => {
  const message = (env: Record<string, string>) => {
    try {
      loadConfig(env);
    } catch (err) {
      return (err as Error).message;
    }
    return "";
  };
  t.match(
    message({ PORT: "abc" }),
    /^invalid configuration:\n {2}PORT must be a whole number from 0 to 65535 \(got "abc"\)$/,
  );
  t.match(message({ PORT: "70000" }), /PORT must be a whole number from 0 to 65535 \(got "70000"\)/);
  t.match(
    message({ LOG_LEVEL: "loud" }),
    /LOG_LEVEL must be one of fatal, error, warn, info, debug, trace, silent \(got "loud"\)/,
  );
  t.match(message({ FLOCK_BAN_STRIKES: "0" }), /FLOCK_BAN_STRIKES must be a whole number, 1 or more \(got "0"\)/);
  t.match(message({ PG_SCHEMA: "Bad" }), /PG_SCHEMA must be a lowercase SQL identifier \(got "Bad"\)/);
  t.match(
    message({ OTEL_EXPORTER_OTLP_ENDPOINT: "collector:4318" }),
    /OTEL_EXPORTER_OTLP_ENDPOINT: must be an http:\/\/ or https:\/\/ URL/,
  );
  t.match(
    message({ OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: "not a url" }),
    /OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: must be an http:\/\/ or https:\/\/ URL/,
  );
  const secret = message({ FLOCK_METRICS_TOKEN: "short-secret" });
  t.match(secret, /FLOCK_METRICS_TOKEN must be at least 16 characters/);
  t.notMatch(secret, /short-secret/, "a setting that may hold a secret is never quoted");
  t.notMatch(message({ PORT: "abc", PG_POOL: "x" }), /Invalid input|expected number|received NaN/);
});
