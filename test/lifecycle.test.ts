// The node's lifecycle in one place (runtime/server.ts, runtime/node.ts): every per-node part is started in the
// order docs/ARCHITECTURE.md states and stopped in the reverse order; a closed node leaves nothing running (its
// process exits by itself); no per-node part hides in a module-level cache. (That only runtime/server.ts, the
// composition root, imports handlers/ is test/import-fence.test.ts's, with the rest of the import fence.)
import { spawn } from "node:child_process";
import { readdirSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import t from "tap";
import { registerAgent } from "./helpers/http.ts";
import { dropSchema, deletePrefix, startTestNode } from "./helpers/node.ts";
import { TEST_DATABASE_URL, TEST_REDIS_URL, uniqueName } from "./helpers/env.ts";

const ROOT = fileURLToPath(new URL("../", import.meta.url));

/** The start order the architecture document states: the backticked lowercase names of its "Start order" paragraph. */
function documentedOrder(): string[] {
  const doc = readFileSync(join(ROOT, "docs/ARCHITECTURE.md"), "utf8");
  const paragraph = /^\s*\*\*Start order\*\*([\s\S]*?)\n\s*\n/m.exec(doc);
  if (!paragraph) return [];
  return [...paragraph[1]!.matchAll(/`([a-z-]+)`/g)].map((m) => m[1]!);
}

function sources(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const p = join(dir, name);
    if (statSync(p).isDirectory()) return sources(p);
    return p.endsWith(".ts") ? [p] : [];
  });
}

for (const engine of ["redis", "memory"] as const) {
  t.test(`${engine}: parts start in the documented order and stop in the reverse`, async (t) => {
    const order = documentedOrder();
    t.ok(order.length >= 10, "the architecture document states the start order");
    const events: string[] = [];
    const node = await startTestNode(t, { engine, trace: (e) => events.push(e) });
    t.same(
      events,
      order.map((n) => `start ${n}`),
      "started in the documented order",
    );
    // the node works with every part up
    const a = await registerAgent(node.url, "lifecycle");
    t.ok(a.token);
    events.length = 0;
    await node.close();
    t.same(
      events,
      [...order].reverse().map((n) => `stop ${n}`),
      "stopped in the reverse order",
    );
  });
}

t.test("a closed node leaves nothing running: its process exits by itself on SIGTERM", async (t) => {
  const schema = uniqueName("exit");
  const prefix = `flocktest:${uniqueName("exit")}:`;
  t.teardown(async () => {
    await dropSchema(schema);
    await deletePrefix(prefix);
  });
  const child = spawn(process.execPath, ["--import", "tsx", "test/helpers/close-exit.ts"], {
    cwd: ROOT,
    env: {
      PATH: process.env["PATH"] ?? "",
      HOST: "127.0.0.1",
      PORT: "0",
      LOG_LEVEL: "silent",
      DATABASE_URL: TEST_DATABASE_URL,
      PG_SCHEMA: schema,
      REDIS_URL: TEST_REDIS_URL,
      REDIS_PREFIX: prefix,
      FLOCK_SHUTDOWN_GRACE: "2",
      // the metrics listener too, so its server and a scrape's kept-alive connection must go with the node
      FLOCK_METRICS_PORT: "0",
    },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let out = "";
  child.stdout.on("data", (d: Buffer) => (out += d.toString()));
  child.stderr.on("data", (d: Buffer) => (out += d.toString()));
  const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)));
  const [port, metricsPort] = await new Promise<[number, number]>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`no start:\n${out}`)), 30_000);
    child.stdout.on("data", () => {
      const m = /listening (\d+) metrics (\d+)/.exec(out);
      if (m) {
        clearTimeout(timer);
        resolve([Number(m[1]), Number(m[2])]);
      }
    });
  });
  // some traffic first, so every lazily made part would exist: a sign-up, a long poll, a send
  const url = `http://127.0.0.1:${port}`;
  const a = await registerAgent(url, "exit-a");
  const b = await registerAgent(url, "exit-b");
  const auth = (tok: string) => ({ authorization: `Bearer ${tok}`, "content-type": "application/json" });
  const poll = fetch(`${url}/v1/messages/pending?timeout=2`, { headers: auth(b.token) }).then((r) => r.status);
  const sent = await fetch(`${url}/v1/messages`, {
    method: "POST",
    headers: auth(a.token),
    body: JSON.stringify({ to: b.id, body: "hi" }),
  });
  t.equal(sent.status, 201);
  t.equal(await poll, 200);
  const scrape = await fetch(`http://127.0.0.1:${metricsPort}/metrics`);
  t.equal(scrape.status, 200, "the metrics listener answers (its connection kept alive)");
  await scrape.text();
  const started = performance.now();
  child.kill("SIGTERM");
  const timeout = setTimeout(() => child.kill("SIGKILL"), 15_000);
  const code = await exited;
  clearTimeout(timeout);
  const left = /left (\[.*\])/.exec(out);
  t.ok(left, `close() finished:\n${out}`);
  // the only handles a closed node may leave are the process's own pipes
  const handles = left ? (JSON.parse(left[1]!) as string[]).filter((h) => h !== "PipeWrap" && h !== "TTYWrap") : [];
  t.same(handles, [], "no timer, socket or server is left after close()");
  t.equal(code, 0, "the process exited by itself");
  const took = performance.now() - started;
  t.ok(took < 15_000, `within 15 s of the SIGTERM (${Math.round(took)} ms)`);
});

t.test("no per-node part is a module-level cache", async (t) => {
  const files = [...sources(join(ROOT, "runtime")), ...sources(join(ROOT, "handlers"))];
  const caches = files.filter((f) => /new WeakMap<(Services|Config)\b/.test(readFileSync(f, "utf8")));
  t.same(
    caches.map((f) => f.slice(ROOT.length)),
    [],
    "no WeakMap keyed by the services or the config",
  );
});
