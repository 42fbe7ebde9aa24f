// The command line as scripts use it: under --json, stdout holds only the answer (errors and usage go to stderr),
// and --verbose shows on stderr the retries behind a slow answer. (Every command against a real node is
// test/cli-commands.test.ts, a file of its own so that tap runs the two side by side; paying, test/cli-pay.test.ts.)
import { spawn } from "node:child_process";
import { existsSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { createServer } from "node:http";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import t from "tap";
import { startTestNode } from "./helpers/node.ts";
import { freePort } from "./helpers/private-servers.ts";
import { flock, type Run, tempDir } from "./helpers/cli.ts";

const ROOT = fileURLToPath(new URL("../", import.meta.url));

// about 60 runs of the CLI (each a node process loading the SDK through tsx): well inside 120 s on 2 idle cores, not
// when they are busy with other files
t.setTimeout(300_000);

const USAGE_MISTAKES = [["bogus", "--json"], ["send", "--json"], ["--no-such-flag"], []];

t.test("--json: stdout is the answer alone; errors and usage go to stderr", async (t) => {
  const node = await startTestNode(t, { engine: "memory", env: { FLOCK_LIMITS_SCALE: "20" } });
  const env = { FLOCK_URL: node.url };
  const reg = await flock(["register", "cli-json", "--json"], env);
  t.equal(reg.code, 0);
  t.equal(reg.stderr, "");
  const token = (JSON.parse(reg.stdout) as { token: string }).token;

  // independent runs, one beside the other
  const [unauthorized, missing, readable, ...usage] = await Promise.all([
    flock(["whoami", "--json"], { ...env, FLOCK_TOKEN: `am_${"x".repeat(43)}` }),
    flock(["like", "moment_1", "--json"], { ...env, FLOCK_TOKEN: token }),
    flock(["like", "moment_1"], { ...env, FLOCK_TOKEN: token }),
    ...USAGE_MISTAKES.map((args) => flock(args, env)),
  ]);
  t.equal(unauthorized.code, 3);
  t.equal(unauthorized.stdout, "", "nothing on stdout for a failure");
  t.match(JSON.parse(unauthorized.stderr), { error: "unauthorized" }, "the error body, as JSON, on stderr");

  t.equal(missing.code, 4);
  t.equal(missing.stdout, "");
  t.match(JSON.parse(missing.stderr), { error: "not_found" });

  t.equal(readable.stdout, "");
  t.match(readable.stderr, /^error 404 not_found: /);

  for (const [i, args] of USAGE_MISTAKES.entries()) {
    const r = usage[i]!;
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
    res.end(
      JSON.stringify({ agent: { id: "1", display_name: "slow", description: "", created_at: "2026-01-01T00:00:00Z" } }),
    );
  });
  await new Promise<void>((r) => srv.listen(0, "127.0.0.1", () => r()));
  t.teardown(() => srv.close());
  const url = `http://127.0.0.1:${(srv.address() as { port: number }).port}`;
  const env = { FLOCK_URL: url, FLOCK_TOKEN: `am_${"y".repeat(43)}` };

  const quiet = await flock(["whoami", "--json"], env);
  t.equal(quiet.code, 0);
  t.equal(hits, 3, "retried twice");
  t.equal(quiet.stderr, "", "without --verbose the retries are silent");
  t.equal((JSON.parse(quiet.stdout) as { agent: { id: string } }).agent.id, "1");

  hits = 0;
  const verbose = await flock(["whoami", "--json", "--verbose"], env);
  t.equal(verbose.code, 0);
  t.equal(
    (JSON.parse(verbose.stdout) as { agent: { id: string } }).agent.id,
    "1",
    "stdout still holds only the answer",
  );
  const retries = verbose.stderr.split("\n").filter((l) => /retry/.test(l));
  t.equal(retries.length, 2, verbose.stderr);
  t.match(retries[0], /GET \/v1\/agents\/me answered 503 unavailable; retry 1 of 4 in 0\.0 s \(Retry-After\)/);
  t.match(retries[1], /retry 2 of 4/);
  const exchanges = verbose.stderr.split("\n").filter((l) => /^flockctl: GET \/v1\/agents\/me \d+ in \d+ ms$/.test(l));
  t.same(
    exchanges.map((l) => l.split(" ")[3]),
    ["503", "503", "200"],
    "each attempt, with its status and time",
  );
});

t.test(
  "inside the repository, npx flockctl is the workspace's command (the lock links what package.json names)",
  async (t) => {
    const lock = JSON.parse(readFileSync(`${ROOT}package-lock.json`, "utf8")) as {
      packages: Record<string, { bin?: Record<string, string> }>;
    };
    const pkg = JSON.parse(readFileSync(`${ROOT}client/package.json`, "utf8")) as { bin: Record<string, string> };
    t.same(lock.packages["client"]?.bin, pkg.bin, "package-lock.json's bin of client/ is client/package.json's");
    t.same(Object.keys(pkg.bin), ["flockctl"]);
    const r = await new Promise<Run>((resolve) => {
      const child = spawn("npx", ["--no-install", "flockctl", "--help"], {
        cwd: ROOT,
        env: { PATH: process.env["PATH"] ?? "", HOME: process.env["HOME"] ?? "/tmp" },
        stdio: ["ignore", "pipe", "pipe"],
      });
      let stdout = "";
      let stderr = "";
      child.stdout.on("data", (d: Buffer) => (stdout += d.toString()));
      child.stderr.on("data", (d: Buffer) => (stderr += d.toString()));
      child.on("exit", (code) => resolve({ code, stdout, stderr }));
    });
    t.equal(r.code, 0, r.stderr);
    t.match(r.stdout, /^usage: flockctl /);
  },
);

t.test(
  "a creating command sends one Idempotency-Key per run; a run whose outcome is unknown prints it to run again with",
  async (t) => {
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
        res.writeHead(201, {
          "content-type": "application/json",
          ...(seen && key ? { "idempotency-replayed": "true" } : {}),
        });
        res.end(JSON.stringify({ id: "msg_1", thread_id: "thread_1", body: "hi" }));
      });
    });
    await new Promise<void>((r) => srv.listen(0, "127.0.0.1", () => r()));
    t.teardown(() => srv.close());
    const env = {
      FLOCK_URL: `http://127.0.0.1:${(srv.address() as { port: number }).port}`,
      FLOCK_TOKEN: `am_${"z".repeat(43)}`,
    };

    const plain = await flock(["send", "2", "hi"], env);
    t.equal(plain.code, 0, plain.stderr);
    t.match(keys[0], /^[A-Za-z0-9_-]{22}$/, "a fresh key when none is given");

    keys.length = 0;
    const given = await flock(["send", "2", "hi", "--idempotency-key", "order-17", "--verbose"], env);
    t.equal(given.code, 0);
    const again = await flock(["send", "2", "hi", "--idempotency-key", "order-17", "--verbose"], env);
    t.same(keys, ["order-17", "order-17"]);
    t.match(given.stderr, /^flockctl: Idempotency-Key order-17$/m);
    t.match(
      again.stderr,
      /POST \/v1\/messages 201 in \d+ ms \(replayed: the first answer to this Idempotency-Key\)/,
      "--verbose says the answer is a replay",
    );

    for (const args of [
      ["whoami", "--idempotency-key", "k"],
      ["send", "2", "hi", "--idempotency-key", "has space"],
    ]) {
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
    t.match(
      failed.stderr,
      `error 503 unavailable: try again\nthe outcome is unknown: run the same command with --idempotency-key ${keys[0]} to retry it without creating it twice`,
    );
    const failedJson = await flock(["friend", "request", "2", "--json", "--idempotency-key", "fr-9"], env);
    t.match(
      JSON.parse(failedJson.stderr),
      { error: "unavailable", idempotency_key: "fr-9" },
      "under --json, the key is a field of the error",
    );
    const read = await flock(["whoami", "--json"], env);
    t.notMatch(read.stderr, /idempotency_key/, "a read names no key");
  },
);

t.test("--version prints the version; a typo gets a suggestion; one wording per rule", async (t) => {
  const pkg = JSON.parse(readFileSync(`${ROOT}client/package.json`, "utf8")) as { version: string };
  const v = await flock(["--version"], {});
  t.same([v.code, v.stdout, v.stderr], [0, `${pkg.version}\n`, ""], "the version alone, not the usage");

  const cases: [string[], RegExp][] = [
    [["fed"], /^unknown command "fed"; did you mean "feed"\?/],
    [["whoamii"], /did you mean "whoami"\?/],
    [["sned", "x", "hi"], /^unknown command "sned"; did you mean "send"\?/],
    [["group", "creat", "x"], /^unknown command "group creat"; did you mean "group create"\?/],
    [["friend", "acept", "fr_1"], /did you mean "friend accept"\?/],
    [["feed", "--lmit", "3"], /^unknown flag --lmit; did you mean --limit\?/],
  ];
  const runs = await Promise.all(cases.map(([args]) => flock(args, {})));
  for (const [i, [args, pattern]] of cases.entries()) {
    const r = runs[i]!;
    t.equal(r.code, 2, args.join(" "));
    t.match(r.stderr, pattern, args.join(" "));
    t.equal(r.stdout, "");
  }
  // the same mistake (no key) reads the same whether the value is missing or empty
  const [missing, empty, abc, noLimit, misplaced, short] = await Promise.all([
    flock(["send", "2", "hi", "--idempotency-key"], {}),
    flock(["send", "2", "hi", "--idempotency-key="], {}),
    flock(["feed", "--limit", "abc"], {}),
    flock(["feed", "--limit"], {}),
    flock(["whoami", "--limit", "3"], {}),
    flock(["send", "2"], {}),
  ]);
  const rule = "--idempotency-key must be 1 to 255 visible ASCII characters, no spaces";
  t.match(missing.stderr, `${rule} (got nothing)`);
  t.match(empty.stderr, `${rule} (got "")`);
  t.match(abc.stderr, /^--limit must be a whole number from 1 to 100 \(got "abc"\)/);
  t.match(noLimit.stderr, /^--limit must be a whole number from 1 to 100 \(got nothing\)/);
  t.match(misplaced.stderr, /^--limit goes with feed, .*, not whoami/);
  t.equal(short.code, 2);
  t.match(short.stderr, /^missing <body>\nusage: flockctl send <to> <body>/);
});

t.test("errors say what to do: no token, a server that is down, a URL without a scheme", async (t) => {
  const port = await freePort(); // nothing listens there
  const [noToken, noTokenJson, down, downJson, noScheme] = await Promise.all([
    flock(["whoami"], { FLOCK_URL: "http://127.0.0.1:9" }),
    flock(["whoami", "--json"], {}),
    flock(["whoami"], { FLOCK_URL: `http://127.0.0.1:${port}`, FLOCK_TOKEN: `am_${"d".repeat(43)}` }),
    flock(["feed", "--json"], { FLOCK_URL: `http://127.0.0.1:${port}`, FLOCK_TOKEN: `am_${"d".repeat(43)}` }),
    flock(["whoami"], { FLOCK_URL: "localhost:8080", FLOCK_TOKEN: `am_${"d".repeat(43)}` }),
  ]);
  t.equal(noToken.code, 3);
  t.match(noToken.stderr, "register first (flockctl register <name> --save), or export FLOCK_TOKEN / flockctl login");
  t.match(JSON.parse(noTokenJson.stderr), { error: "setup", hint: /register first/ });

  t.equal(down.code, 1);
  t.match(
    down.stderr,
    new RegExp(
      `^error: cannot reach http://127\\.0\\.0\\.1:${port} \\(.*ECONNREFUSED.*\\)\\nis the server running\\? set FLOCK_URL`,
    ),
  );
  t.match(JSON.parse(downJson.stderr), {
    error: "unreachable",
    url: `http://127.0.0.1:${port}`,
    hint: /is the server running\? set FLOCK_URL/,
  });

  t.equal(noScheme.code, 2);
  t.match(
    noScheme.stderr,
    /^error: FLOCK_URL "localhost:8080" is not an http:\/\/ or https:\/\/ URL .*\nis the server running\? set FLOCK_URL/,
  );
});

t.test(
  "login saves the token and URL in a file only its owner reads; FLOCK_TOKEN wins over it; logout removes it",
  async (t) => {
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
    t.equal((JSON.parse(me.stdout) as { agent: { id: string } }).agent.id, agent.id);
    const refused = await flock(["whoami"], { XDG_CONFIG_HOME: home, FLOCK_TOKEN: `am_${"w".repeat(43)}` });
    t.equal(refused.code, 3, "FLOCK_TOKEN is read before the file");
    t.match(refused.stderr, /^error 401 unauthorized: .*\nthe token in FLOCK_TOKEN was refused .*flockctl login/);

    const out = await flock(["logout"], { XDG_CONFIG_HOME: home });
    t.match(out.stdout, /^logged out: removed /);
    t.notOk(existsSync(file));
    t.equal((await flock(["whoami"], { XDG_CONFIG_HOME: home })).code, 3, "logged out: no token");

    // login checks the token first: a refused one is not saved; a good one is, with 0600 whatever the umask
    t.equal((await flock(["login", `am_${"x".repeat(43)}`], { FLOCK_URL: node.url, XDG_CONFIG_HOME: home })).code, 3);
    t.notOk(existsSync(file), "a refused token is not saved");
    const login = await flock(["login", token], { FLOCK_URL: node.url, XDG_CONFIG_HOME: home });
    t.equal(login.code, 0, login.stderr);
    t.match(
      login.stdout,
      new RegExp(`^logged in as ${agent.id} \\(saved\\) at ${node.url.replace(/\./g, "\\.")}; saved to ${file}`),
    );
    t.equal(statSync(file).mode & 0o777, 0o600);
    // a file others can read is used, with a warning naming the fix
    writeFileSync(file, readFileSync(file), { mode: 0o644 });
    const { chmodSync } = await import("node:fs");
    chmodSync(file, 0o644);
    const loose = await flock(["whoami"], { XDG_CONFIG_HOME: home });
    t.equal(loose.code, 0);
    t.match(loose.stderr, /can be read by others \(mode 0644\): chmod 600 it/);
  },
);
