// The command line as scripts use it: under --json, stdout holds only the answer (errors and usage go to stderr),
// and --verbose shows on stderr the retries behind a slow answer.
import { type ChildProcess, spawn } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { createServer } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import t from "tap";
import { signInWithWallet } from "./helpers/humans.ts";
import { startTestNode } from "./helpers/node.ts";
import { freePort } from "./helpers/private-servers.ts";
import { until } from "./helpers/wait.ts";

const ROOT = fileURLToPath(new URL("../", import.meta.url));

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** A config folder of its own for each run unless the test gives one: a run never reads the user's saved login. */
const NO_LOGIN = mkdtempSync(join(tmpdir(), "flockctl-none-"));
t.teardown(() => rmSync(NO_LOGIN, { recursive: true, force: true }));

/** Starts the CLI from its source (bin.js imports cli.ts; tsx loads it). */
function start(args: string[], env: Record<string, string>): ChildProcess {
  return spawn(process.execPath, ["--import", "tsx", "client/bin.js", ...args], {
    cwd: ROOT,
    env: { PATH: process.env["PATH"] ?? "", XDG_CONFIG_HOME: NO_LOGIN, ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
}

/** Runs the CLI, stdout and stderr kept apart. */
function flock(args: string[], env: Record<string, string>): Promise<Run> {
  return new Promise((resolve) => {
    const child = start(args, env);
    let stdout = "";
    let stderr = "";
    child.stdout!.on("data", (d: Buffer) => (stdout += d.toString()));
    child.stderr!.on("data", (d: Buffer) => (stderr += d.toString()));
    child.on("exit", (code) => resolve({ code, stdout, stderr }));
  });
}

const tempDir = (t: { teardown(fn: () => void): void }, label: string) => {
  const dir = mkdtempSync(join(tmpdir(), `flockctl-${label}-`));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
};

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

t.test("--version prints the version; a typo gets a suggestion; one wording per rule", async (t) => {
  const pkg = JSON.parse(readFileSync(`${ROOT}client/package.json`, "utf8")) as { version: string };
  const v = await flock(["--version"], {});
  t.same([v.code, v.stdout, v.stderr], [0, `${pkg.version}\n`, ""], "the version alone, not the usage");

  const cases: [string[], RegExp][] = [
    [["fed"], /^unknown command "fed"; did you mean "feed"\?/],
    [["whoamii"], /did you mean "whoami"\?/],
    [["group", "creat", "x"], /^unknown command "group creat"; did you mean "group create"\?/],
    [["friend", "acept", "fr_1"], /did you mean "friend accept"\?/],
    [["feed", "--lmit", "3"], /^unknown flag --lmit; did you mean --limit\?/],
  ];
  for (const [args, pattern] of cases) {
    const r = await flock(args, {});
    t.equal(r.code, 2, args.join(" "));
    t.match(r.stderr, pattern, args.join(" "));
    t.equal(r.stdout, "");
  }
  // the same mistake (no key) reads the same whether the value is missing or empty
  const missing = await flock(["send", "2", "hi", "--idempotency-key"], {});
  const empty = await flock(["send", "2", "hi", "--idempotency-key="], {});
  const rule = "--idempotency-key must be 1 to 255 visible ASCII characters, no spaces";
  t.match(missing.stderr, `${rule} (got nothing)`);
  t.match(empty.stderr, `${rule} (got "")`);
  t.match((await flock(["feed", "--limit", "abc"], {})).stderr, /^--limit must be a whole number from 1 to 100 \(got "abc"\)/);
  t.match((await flock(["feed", "--limit"], {})).stderr, /^--limit must be a whole number from 1 to 100 \(got nothing\)/);
  t.match((await flock(["whoami", "--limit", "3"], {})).stderr, /^--limit goes with feed, .*, not whoami/);
  const short = await flock(["send", "2"], {});
  t.equal(short.code, 2);
  t.match(short.stderr, /^missing <body>\nusage: flockctl send <to> <body>/);
});

t.test("errors say what to do: no token, a server that is down, a URL without a scheme", async (t) => {
  const noToken = await flock(["whoami"], { FLOCK_URL: "http://127.0.0.1:9" });
  t.equal(noToken.code, 3);
  t.match(noToken.stderr, "register first (flockctl register <name> --save), or export FLOCK_TOKEN / flockctl login");
  t.match(JSON.parse((await flock(["whoami", "--json"], {})).stderr), { error: "setup", hint: /register first/ });

  const port = await freePort(); // nothing listens there
  const down = await flock(["whoami"], { FLOCK_URL: `http://127.0.0.1:${port}`, FLOCK_TOKEN: `am_${"d".repeat(43)}` });
  t.equal(down.code, 1);
  t.match(down.stderr, new RegExp(`^error: cannot reach http://127\\.0\\.0\\.1:${port} \\(.*ECONNREFUSED.*\\)\\nis the server running\\? set FLOCK_URL`));
  const downJson = await flock(["feed", "--json"], { FLOCK_URL: `http://127.0.0.1:${port}`, FLOCK_TOKEN: `am_${"d".repeat(43)}` });
  t.match(JSON.parse(downJson.stderr), { error: "unreachable", url: `http://127.0.0.1:${port}`, hint: /is the server running\? set FLOCK_URL/ });

  const noScheme = await flock(["whoami"], { FLOCK_URL: "localhost:8080", FLOCK_TOKEN: `am_${"d".repeat(43)}` });
  t.equal(noScheme.code, 2);
  t.match(noScheme.stderr, /^error: FLOCK_URL "localhost:8080" is not an http:\/\/ or https:\/\/ URL .*\nis the server running\? set FLOCK_URL/);
});

t.test("login saves the token and URL in a file only its owner reads; FLOCK_TOKEN wins over it; logout removes it", async (t) => {
  const node = await startTestNode(t, { engine: "memory", env: { FLOCK_LIMITS_SCALE: "20" } });
  const home = tempDir(t, "xdg");
  const file = join(home, "flock", "config.json");
  const reg = await flock(["register", "saved", "--save", "--json"], { FLOCK_URL: node.url, XDG_CONFIG_HOME: home });
  t.equal(reg.code, 0, reg.stderr);
  const { agent, token } = JSON.parse(reg.stdout) as { agent: { id: string }; token: string };
  t.equal(statSync(file).mode & 0o777, 0o600, "the file: 0600");
  t.equal(statSync(join(home, "flock")).mode & 0o777, 0o700, "its folder: 0700");
  t.same(JSON.parse(readFileSync(file, "utf8")), { url: node.url, token });

  // no FLOCK_URL, no FLOCK_TOKEN: both come from the file
  const me = await flock(["whoami", "--json"], { XDG_CONFIG_HOME: home });
  t.equal(me.code, 0, me.stderr);
  t.equal((JSON.parse(me.stdout) as { id: string }).id, agent.id);
  const refused = await flock(["whoami"], { XDG_CONFIG_HOME: home, FLOCK_TOKEN: `am_${"w".repeat(43)}` });
  t.equal(refused.code, 3, "FLOCK_TOKEN is read before the file");
  t.match(refused.stderr, /^error 401 unauthorized: .*\nthe token was refused: flockctl login/);

  const out = await flock(["logout"], { XDG_CONFIG_HOME: home });
  t.match(out.stdout, /^logged out: removed /);
  t.notOk(existsSync(file));
  t.equal((await flock(["whoami"], { XDG_CONFIG_HOME: home })).code, 3, "logged out: no token");

  // login checks the token first: a refused one is not saved; a good one is, with 0600 whatever the umask
  t.equal((await flock(["login", `am_${"x".repeat(43)}`], { FLOCK_URL: node.url, XDG_CONFIG_HOME: home })).code, 3);
  t.notOk(existsSync(file), "a refused token is not saved");
  const login = await flock(["login", token], { FLOCK_URL: node.url, XDG_CONFIG_HOME: home });
  t.equal(login.code, 0, login.stderr);
  t.match(login.stdout, new RegExp(`^logged in as ${agent.id} \\(saved\\) at ${node.url.replace(/\./g, "\\.")}; saved to ${file}`));
  t.equal(statSync(file).mode & 0o777, 0o600);
  // a file others can read is used, with a warning naming the fix
  writeFileSync(file, readFileSync(file), { mode: 0o644 });
  const { chmodSync } = await import("node:fs");
  chmodSync(file, 0o644);
  const loose = await flock(["whoami"], { XDG_CONFIG_HOME: home });
  t.equal(loose.code, 0);
  t.match(loose.stderr, /can be read by others \(mode 0644\): chmod 600 it/);
});

t.test("every command against a real node: profile, friends, threads, history --follow, groups, upload, payments", async (t) => {
  const node = await startTestNode(t, { engine: "memory", env: { FLOCK_LIMITS_SCALE: "20" } });
  const env = { FLOCK_URL: node.url };
  const register = async (name: string) => {
    const r = await flock(["register", name, "--json"], env);
    const { agent, token } = JSON.parse(r.stdout) as { agent: { id: string }; token: string };
    return { id: agent.id, env: { ...env, FLOCK_TOKEN: token } };
  };
  const [a, b, c] = [await register("Ann"), await register("Bob"), await register("Cy")];
  const json = async (args: string[], e: Record<string, string>) => {
    const r = await flock([...args, "--json"], e);
    t.equal(r.code, 0, `${args.join(" ")}: ${r.stderr}`);
    return r.stdout === "" ? undefined : JSON.parse(r.stdout);
  };

  // profile: show and set, with the agent's privacy setting
  t.match((await flock(["profile"], a.env)).stdout, /^agent \d+\nname {9}Ann\n[\s\S]*group adds from anyone/);
  const set = await json(["profile", "set", "--name", "Ann B", "--description", "tester", "--accepts-group-adds-from", "friends"], a.env);
  t.match(set, { display_name: "Ann B", description: "tester", accepts_group_adds_from: "friends" });
  t.equal((await flock(["profile", "set", "--accepts-messages-from", "anyone"], a.env)).code, 2, "a person's setting, refused for an agent");
  t.equal((await flock(["profile", "set"], a.env)).code, 2, "nothing to change");
  const person = await signInWithWallet(node.url);
  const human = await json(["profile", "set", "--accepts-messages-from", "anyone", "--name", "Pat"], { ...env, FLOCK_TOKEN: person.token });
  t.match(human, { id: person.id, display_name: "Pat", accepts_messages_from: "anyone" });
  t.match((await flock(["whoami"], { ...env, FLOCK_TOKEN: person.token })).stdout, new RegExp(`^${person.id} Pat`));

  // friends: request, requests, accept, list, remove (and decline)
  const req = await json(["friend", "request", b.id], a.env);
  t.match((await flock(["friend", "requests"], b.env)).stdout, new RegExp(`in   ${req.request.id}  from ${a.id}`));
  t.match(await json(["friend", "accept", req.request.id], b.env), { friend: { id: a.id } });
  t.match(await json(["friend", "list"], a.env), [{ id: b.id }]);
  t.match((await flock(["friend", "remove", b.id], a.env)).stdout, `no longer friends with ${b.id}`);
  t.same(await json(["friend", "list"], a.env), []);
  const req2 = await json(["friend", "request", c.id], a.env);
  t.match((await flock(["friend", "decline", req2.request.id], c.env)).stdout, `declined ${req2.request.id}`);

  // direct messages: threads, history by the other's id, oldest first
  const first = await json(["send", b.id, "one"], a.env);
  await json(["send", a.id, "two"], b.env);
  const threads = await json(["threads"], a.env);
  t.match(threads.threads, [{ id: first.thread_id, kind: "direct", peer: { id: b.id }, last_message: { body: "two" } }]);
  t.match((await flock(["threads"], a.env)).stdout, new RegExp(`^${first.thread_id}  with Bob \\(${b.id}\\)`));
  const history = await flock(["history", b.id], a.env);
  t.match(history.stdout, /: one\n.*: two$/m, "oldest first");
  t.same((await json(["history", first.thread_id], a.env)).messages.map((m: { body: string }) => m.body), ["two", "one"], "--json: the page as the API answers it");
  const none = await flock(["history", c.id], a.env);
  t.equal(none.code, 4);
  t.match(none.stderr, new RegExp(`no conversation with ${c.id} yet\\nflockctl send ${c.id}`));

  // history --follow: the history, then each new message as it comes, until Ctrl-C; it acknowledges nothing
  const follower = start(["history", b.id, "--follow"], a.env);
  let followed = "";
  follower.stdout!.on("data", (d: Buffer) => (followed += d.toString()));
  await until(() => followed.includes(": two"), { ms: 15_000, every: 50, what: () => followed });
  await json(["send", a.id, "three"], b.env);
  await until(() => followed.includes(": three"), { ms: 15_000, every: 50, what: () => followed });
  const exited = new Promise<number | null>((r) => follower.once("exit", r));
  follower.kill("SIGINT");
  t.equal(await exited, 0, "Ctrl-C ends it cleanly");
  t.equal(followed.match(/: three/g)?.length, 1, "each message once");

  // groups: create, list, show, add, remove, send, history, leave
  const g = await json(["group", "create", "crew", b.id], a.env);
  t.match(g, { name: "crew", owner: a.id, members: [{ id: a.id }, { id: b.id }] });
  t.match(await json(["group", "list"], b.env), [{ id: g.id, name: "crew" }]);
  t.match((await flock(["group", "show", g.id], a.env)).stdout, new RegExp(`^${g.id}  crew[\\s\\S]*${b.id}  Bob`));
  t.equal((await json(["group", "add", g.id, c.id], a.env)).members.length, 3);
  const sent = await json(["group", "send", g.id, "hello crew"], a.env);
  t.match(sent, { thread_id: g.thread_id, body: "hello crew" });
  t.match((await flock(["history", g.id], c.env)).stdout, /Ann B \(\d+\) in thread_\d+: hello crew/);
  t.match((await flock(["group", "remove", g.id, c.id], a.env)).stdout, `removed ${c.id} from ${g.id}`);
  t.match((await flock(["group", "leave", g.id], b.env)).stdout, `left ${g.id}`);
  t.same((await json(["group", "show", g.id], a.env)).members.map((m: { id: string }) => m.id), [a.id]);

  // files: upload, attach, download
  const dir = tempDir(t, "files");
  writeFileSync(join(dir, "note.txt"), "hello file\n");
  const f = await json(["upload", join(dir, "note.txt")], a.env);
  t.match(f, { id: /^file_/, name: "note.txt", content_type: "text/plain", size: 11 });
  const withFile = await json(["send", b.id, "see attached", "--attach", f.id], a.env);
  t.match(withFile.attachments, [{ id: f.id, name: "note.txt" }]);
  const saved = join(dir, "copy.txt");
  t.match((await flock(["download", f.id, "--out", saved], b.env)).stdout, `saved ${f.id} to ${saved}`);
  t.equal(readFileSync(saved, "utf8"), "hello file\n");

  // payments: the list, and paying needs a wallet key (never a flag) and a cap
  t.match((await flock(["payments"], a.env)).stdout, "(no payments yet)");
  const noKey = await flock(["pay", b.id, "hi", "--max", "0.5"], a.env);
  t.equal(noKey.code, 2);
  t.match(noKey.stderr, /^error: FLOCK_PRIVATE_KEY is not set\nexport FLOCK_PRIVATE_KEY=0x/);
  const noCap = await flock(["pay", b.id, "hi"], { ...a.env, FLOCK_PRIVATE_KEY: `0x${"1".repeat(64)}` });
  t.match(noCap.stderr, /pay needs --max DOLLARS/);
  t.match((await flock(["pay", b.id, "hi", "--max", "-1"], a.env)).stderr, /^--max must be an amount of US dollars above 0/);
  // a free agent charges nothing: pay sends as send does
  const free = await flock(["pay", b.id, "free one", "--max", "0.5"], { ...a.env, FLOCK_PRIVATE_KEY: `0x${"1".repeat(64)}` });
  t.equal(free.code, 0, free.stderr);
  t.match(free.stdout, /^sent msg_\d+ in thread_\d+ \(it charged nothing\)/);
});
