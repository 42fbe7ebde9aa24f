// The command line as scripts use it: under --json, stdout holds only the answer (errors and usage go to stderr),
// and --verbose shows on stderr the retries behind a slow answer.
import { spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import { createServer } from "node:http";
import { fileURLToPath } from "node:url";
import t from "tap";
import { startTestNode } from "./helpers/node.ts";

const ROOT = fileURLToPath(new URL("../", import.meta.url));

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs the CLI from its source (bin.js imports cli.ts; tsx loads it), stdout and stderr kept apart. */
function flock(args: string[], env: Record<string, string>): Promise<Run> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, ["--import", "tsx", "client/bin.js", ...args], {
      cwd: ROOT,
      env: { PATH: process.env["PATH"] ?? "", ...env },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (d: Buffer) => (stdout += d.toString()));
    child.stderr.on("data", (d: Buffer) => (stderr += d.toString()));
    child.on("exit", (code) => resolve({ code, stdout, stderr }));
  });
}

t.test("--json: stdout is the answer alone; errors and usage go to stderr", async (t) => {
  const node = await startTestNode(t, { engine: "memory", env: { FLOCK_LIMITS_SCALE: "20" } });
  const env = { FLOCK_URL: node.url };
  const reg = await flock(["register", "cli-json", "--json"], env);
  t.equal(reg.code, 0);
  t.equal(reg.stderr, "");
  const token = (JSON.parse(reg.stdout) as { token: string }).token;

  const unauthorized = await flock(["whoami", "--json"], { ...env, FLOCK_TOKEN: `am_${"x".repeat(43)}` });
  t.equal(unauthorized.code, 3);
  t.equal(unauthorized.stdout, "", "nothing on stdout for a failure");
  t.match(JSON.parse(unauthorized.stderr), { error: "unauthorized" }, "the error body, as JSON, on stderr");

  const missing = await flock(["like", "moment_1", "--json"], { ...env, FLOCK_TOKEN: token });
  t.equal(missing.code, 4);
  t.equal(missing.stdout, "");
  t.match(JSON.parse(missing.stderr), { error: "not_found" });

  const readable = await flock(["like", "moment_1"], { ...env, FLOCK_TOKEN: token });
  t.equal(readable.stdout, "");
  t.match(readable.stderr, /^error 404 not_found: /);

  for (const args of [["bogus", "--json"], ["send", "--json"], ["--no-such-flag"], []]) {
    const r = await flock(args, env);
    t.equal(r.code, 2, `usage exits 2: ${args.join(" ")}`);
    t.equal(r.stdout, "", `no usage on stdout: ${args.join(" ")}`);
    t.match(r.stderr, /usage: flockctl /);
  }
  const help = await flock(["--help"], env);
  t.equal(help.code, 0);
  t.match(help.stdout, /usage: flockctl /, "asked-for help is the answer: stdout");
  t.equal(help.stderr, "");

  const feed = await flock(["feed", "--json", "--verbose"], { ...env, FLOCK_TOKEN: token });
  t.equal(feed.code, 0);
  t.same(JSON.parse(feed.stdout), { moments: [], has_more: false }, "--verbose keeps stdout parseable");
  t.match(feed.stderr, /GET \/v1\/moments\/feed .*200/);
});

t.test("--verbose shows each retry behind a slow answer", async (t) => {
  // a stand-in server on a real socket: unavailable twice (Retry-After 0), then the answer
  let hits = 0;
  const srv = createServer((req, res) => {
    hits++;
    if (hits <= 2) {
      res.writeHead(503, { "content-type": "application/json", "retry-after": "0" });
      res.end(JSON.stringify({ error: "unavailable", message: "try again" }));
      return;
    }
    res.writeHead(200, { "content-type": "application/json" });
    res.end(JSON.stringify({ agent: { id: "1", display_name: "slow", description: "", created_at: "2026-01-01T00:00:00Z" } }));
  });
  await new Promise<void>((r) => srv.listen(0, "127.0.0.1", () => r()));
  t.teardown(() => srv.close());
  const url = `http://127.0.0.1:${(srv.address() as { port: number }).port}`;
  const env = { FLOCK_URL: url, FLOCK_TOKEN: `am_${"y".repeat(43)}` };

  const quiet = await flock(["whoami", "--json"], env);
  t.equal(quiet.code, 0);
  t.equal(hits, 3, "retried twice");
  t.equal(quiet.stderr, "", "without --verbose the retries are silent");
  t.equal((JSON.parse(quiet.stdout) as { id: string }).id, "1");

  hits = 0;
  const verbose = await flock(["whoami", "--json", "--verbose"], env);
  t.equal(verbose.code, 0);
  t.equal((JSON.parse(verbose.stdout) as { id: string }).id, "1", "stdout still holds only the answer");
  const retries = verbose.stderr.split("\n").filter((l) => /retry/.test(l));
  t.equal(retries.length, 2, verbose.stderr);
  t.match(retries[0], /GET \/v1\/agents\/me answered 503 unavailable; retry 1 of 4 in 0\.0 s \(Retry-After\)/);
  t.match(retries[1], /retry 2 of 4/);
  const exchanges = verbose.stderr.split("\n").filter((l) => /^flockctl: GET \/v1\/agents\/me \d+ in \d+ ms$/.test(l));
  t.same(exchanges.map((l) => l.split(" ")[3]), ["503", "503", "200"], "each attempt, with its status and time");
});

t.test("inside the repository, npx flockctl is the workspace's command (the lock links what package.json names)", async (t) => {
  const lock = JSON.parse(readFileSync(`${ROOT}package-lock.json`, "utf8")) as { packages: Record<string, { bin?: Record<string, string> }> };
  const pkg = JSON.parse(readFileSync(`${ROOT}client/package.json`, "utf8")) as { bin: Record<string, string> };
  t.same(lock.packages["client"]?.bin, pkg.bin, "package-lock.json's bin of client/ is client/package.json's");
  t.same(Object.keys(pkg.bin), ["flockctl"]);
  const r = await new Promise<Run>((resolve) => {
    const child = spawn("npx", ["--no-install", "flockctl", "--help"], { cwd: ROOT, env: { PATH: process.env["PATH"] ?? "", HOME: process.env["HOME"] ?? "/tmp" }, stdio: ["ignore", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (d: Buffer) => (stdout += d.toString()));
    child.stderr.on("data", (d: Buffer) => (stderr += d.toString()));
    child.on("exit", (code) => resolve({ code, stdout, stderr }));
  });
  t.equal(r.code, 0, r.stderr);
  t.match(r.stdout, /^usage: flockctl /);
});

t.test("a creating command sends one Idempotency-Key per run; a run whose outcome is unknown prints it to run again with", async (t) => {
  // a stand-in server on a real socket: records each key; unavailable while `down`, else 201 (replayed for a key seen before)
  const keys: (string | undefined)[] = [];
  let down = false;
  const srv = createServer((req, res) => {
    req.resume();
    req.on("end", () => {
      const key = req.headers["idempotency-key"] as string | undefined;
      const seen = keys.includes(key);
      keys.push(key);
      if (down) {
        res.writeHead(503, { "content-type": "application/json", "retry-after": "0" });
        return void res.end(JSON.stringify({ error: "unavailable", message: "try again" }));
      }
      res.writeHead(201, { "content-type": "application/json", ...(seen && key ? { "idempotency-replayed": "true" } : {}) });
      res.end(JSON.stringify({ id: "msg_1", thread_id: "thread_1", body: "hi" }));
    });
  });
  await new Promise<void>((r) => srv.listen(0, "127.0.0.1", () => r()));
  t.teardown(() => srv.close());
  const env = { FLOCK_URL: `http://127.0.0.1:${(srv.address() as { port: number }).port}`, FLOCK_TOKEN: `am_${"z".repeat(43)}` };

  const plain = await flock(["send", "2", "hi"], env);
  t.equal(plain.code, 0, plain.stderr);
  t.match(keys[0], /^[A-Za-z0-9_-]{22}$/, "a fresh key when none is given");

  keys.length = 0;
  const given = await flock(["send", "2", "hi", "--idempotency-key", "order-17", "--verbose"], env);
  t.equal(given.code, 0);
  const again = await flock(["send", "2", "hi", "--idempotency-key", "order-17", "--verbose"], env);
  t.same(keys, ["order-17", "order-17"]);
  t.match(given.stderr, /^flockctl: Idempotency-Key order-17$/m);
  t.match(again.stderr, /POST \/v1\/messages 201 in \d+ ms \(replayed: the first answer to this Idempotency-Key\)/, "--verbose says the answer is a replay");

  for (const args of [["whoami", "--idempotency-key", "k"], ["send", "2", "hi", "--idempotency-key", "has space"]]) {
    const r = await flock(args, env);
    t.equal(r.code, 2, `usage: ${args.join(" ")}`);
    t.match(r.stderr, /--idempotency-key/);
  }

  keys.length = 0;
  down = true;
  const failed = await flock(["post", "hello"], env);
  t.equal(failed.code, 1);
  t.equal(keys.length, 5, "the SDK's five attempts");
  t.equal(new Set(keys).size, 1, "with one key");
  t.match(failed.stderr, `error 503 unavailable: try again\nthe outcome is unknown: run the same command with --idempotency-key ${keys[0]} to retry it without creating it twice`);
  const failedJson = await flock(["friend", "request", "2", "--json", "--idempotency-key", "fr-9"], env);
  t.match(JSON.parse(failedJson.stderr), { error: "unavailable", idempotency_key: "fr-9" }, "under --json, the key is a field of the error");
  const read = await flock(["whoami", "--json"], env);
  t.notMatch(read.stderr, /idempotency_key/, "a read names no key");
});
