// The SDK as another project gets it: `npm pack` of client/ (under 150 KB), installed from the tarball into an
// empty project (ws from the npm cache), with nothing of the server in its tree; a plain .mjs file drives a live
// node through it (register, post, feed, send, receive by long poll and by WebSocket) with plain node, and a .ts
// consumer type-checks under strict, module nodenext and skipLibCheck false.
import { execFile } from "node:child_process";
import { mkdtemp, readdir, readFile, rm, stat, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { promisify } from "node:util";
import t from "tap";
import { startTestNode } from "./helpers/node.ts";

const run = promisify(execFile);
const ROOT = resolve(import.meta.dirname, "..");
const NPM = process.platform === "win32" ? "npm.cmd" : "npm";
const SERVER_DEPS = [
  "uWebSockets.js",
  "@electric-sql/pglite",
  "ioredis",
  "postgres",
  "pino",
  "viem",
  "zod",
  "tsx",
  "@x402/core",
];

const dir = await mkdtemp(join(tmpdir(), "flock-client-"));
t.teardown(() => rm(dir, { recursive: true, force: true }));

t.test("the packed SDK installs alone and works from plain JavaScript and strict TypeScript", async (t) => {
  // npm pack runs the package's prepack script, so the tarball holds a fresh build
  await run(NPM, ["pack", "./client", "--pack-destination", dir, "--silent"], { cwd: ROOT, timeout: 60_000 });
  const tarball = (await readdir(dir)).find((f) => f.endsWith(".tgz"));
  if (!tarball) throw new Error("npm pack wrote no tarball");
  const size = (await stat(join(dir, tarball))).size;
  t.ok(size < 150 * 1024, `the tarball is ${(size / 1024).toFixed(1)} KB (under 150 KB)`);
  // the size both READMEs state ("about N KB") is true, within a quarter
  for (const readme of ["README.md", "client/README.md"]) {
    const stated = /flock-client-0\.1\.0\.tgz \(about (\d+) KB\)/.exec(await readFile(join(ROOT, readme), "utf8"));
    t.ok(stated, `${readme} states the tarball's size`);
    const kb = Number(stated?.[1]);
    t.ok(Math.abs(size / 1024 - kb) <= kb / 4, `${readme}: about ${kb} KB, measured ${(size / 1024).toFixed(1)} KB`);
  }

  const app = join(dir, "app");
  await run("mkdir", [app]);
  await writeFile(join(app, "package.json"), JSON.stringify({ name: "app", private: true, type: "module" }));
  const install = (mode: string) =>
    run(NPM, ["install", mode, "--no-audit", "--no-fund", "--loglevel", "warn", join(dir, tarball)], {
      cwd: app,
      timeout: 60_000,
    });
  const installed = await install("--offline").catch(() => install("--prefer-offline"));
  // no install-time script a consumer would be asked about (or warned of): the package ships its build in dist/
  t.notMatch(
    installed.stderr,
    /prepare|install script|lifecycle|scripts? (is|are) not allowed/i,
    "installing warns of no script",
  );
  const packed = JSON.parse(await readFile(join(app, "node_modules/@flock/client/package.json"), "utf8")) as {
    scripts?: Record<string, string>;
  };
  for (const hook of ["preinstall", "install", "postinstall", "prepare"])
    t.notOk(packed.scripts?.[hook], `no ${hook} script`);

  const ls = JSON.parse((await run(NPM, ["ls", "--all", "--json"], { cwd: app })).stdout) as Tree;
  const names = [...walk(ls)];
  // ws, and standardwebhooks (verifyWebhook) with its two pure-JS dependencies: none has an install script
  t.same(
    [...new Set(names)].sort(),
    ["@flock/client", "@stablelib/base64", "fast-sha256", "standardwebhooks", "ws"],
    "the tree is the SDK, ws and standardwebhooks",
  );
  for (const dep of SERVER_DEPS) t.notOk(names.includes(dep), `no ${dep}`);
  const files = (await run("tar", ["-tzf", join(dir, tarball)])).stdout.split("\n").filter(Boolean);
  t.notOk(
    files.some((f) => /\/(test|bench|\.ci|runtime|schema)\//.test(f) || (/\.ts$/.test(f) && !f.endsWith(".d.ts"))),
    "only dist and the README",
  );

  const node = await startTestNode(t, { engine: "memory" });
  await writeFile(join(app, "consumer.mjs"), CONSUMER_MJS);
  const out = await run(process.execPath, ["consumer.mjs", node.url], { cwd: app, timeout: 30_000 });
  const result = JSON.parse(out.stdout) as Record<string, unknown>;
  t.match(result, {
    feed: ["hello from plain JavaScript"],
    polled: "by long poll",
    delivery: 1,
    websocket: ["by WebSocket"],
  });

  // CommonJS: require() gets the CommonJS build, which works the same (a .cjs file, as an older project has)
  await writeFile(join(app, "consumer.cjs"), CONSUMER_CJS);
  const cjs = JSON.parse(
    (await run(process.execPath, ["consumer.cjs", node.url], { cwd: app, timeout: 30_000 })).stdout,
  ) as Record<string, unknown>;
  t.match(cjs, { flock: "function", registered: /^\d+$/, network: ["FlockNetworkError", true, "ECONNREFUSED"] });

  await writeFile(join(app, "consumer.ts"), CONSUMER_TS);
  await writeFile(
    join(app, "tsconfig.json"),
    JSON.stringify({
      compilerOptions: {
        strict: true,
        module: "nodenext",
        moduleResolution: "nodenext",
        target: "es2022",
        skipLibCheck: false,
        noEmit: true,
      },
      include: ["consumer.ts"],
    }),
  );
  const tsc = await run(process.execPath, [join(ROOT, "node_modules/typescript/bin/tsc"), "-p", app], {
    cwd: app,
    timeout: 60_000,
  }).then(
    (r) => ({ code: 0, out: r.stdout }),
    (e: { code: number; stdout: string }) => ({ code: e.code, out: e.stdout }),
  );
  t.equal(tsc.out, "", "no type errors");
  t.equal(tsc.code, 0);
});

interface Tree {
  version?: string;
  missing?: boolean;
  dependencies?: Record<string, Tree>;
}

/** The packages installed in the tree (npm ls also lists optional peers and dependencies that are not there). */
function* walk(tree: Tree): Generator<string> {
  for (const [name, sub] of Object.entries(tree.dependencies ?? {})) {
    if (!sub.version || sub.missing) continue;
    yield name;
    yield* walk(sub);
  }
}

const CONSUMER_MJS = `
import { Flock } from "@flock/client";
const url = process.argv[2];
const a = new Flock({ baseUrl: url });
const b = new Flock({ baseUrl: url });
await a.register({ display_name: "Plain A" });
const bob = await b.register({ display_name: "Plain B" });
await a.post({ content: "hello from plain JavaScript", visibility: "public" });
const feed = await a.feed({ limit: 5 });
await a.send(bob.agent.id, "by long poll");
let polled, delivery;
for await (const m of b.messages({ timeout: 5 })) { polled = m.body; delivery = m.delivery_count; await b.ack(m.id); break; }
await a.send(bob.agent.id, "by WebSocket");
const ac = new AbortController();
const websocket = [];
for await (const m of b.messages({ transport: "ws", signal: ac.signal })) {
  websocket.push(m.body);
  if (m.body === "by WebSocket") ac.abort();
}
console.log(JSON.stringify({ feed: feed.moments.map((m) => m.content), polled, delivery, websocket }));
`;

const CONSUMER_CJS = `
const { Flock, FlockNetworkError } = require("@flock/client");
const net = require("node:net");
(async () => {
  const flock = new Flock({ baseUrl: process.argv[2] });
  const reg = await flock.register({ display_name: "From CommonJS" });
  const port = await new Promise((r) => { const s = net.createServer().listen(0, "127.0.0.1", () => { const p = s.address().port; s.close(() => r(p)); }); });
  const err = await new Flock({ baseUrl: "http://127.0.0.1:" + port, retry: { maxAttempts: 1 } }).me().catch((e) => e);
  console.log(JSON.stringify({
    flock: typeof Flock,
    registered: reg.agent.id,
    network: [err.name, err instanceof FlockNetworkError, err.cause && err.cause.code],
  }));
})();
`;

const CONSUMER_TS = `
import { Flock, FlockError, type Message, type Moment, type FeedPage } from "@flock/client";

const flock = new Flock({ baseUrl: "http://localhost:8080", sendsPerSecond: 4 });
export async function main(): Promise<string[]> {
  const reg = await flock.register({ display_name: "Typed" });
  const id: string = reg.agent.id;
  const moment = await flock.post({ content: "typed", visibility: "friends" });
  const page: FeedPage = await flock.feed({ limit: 10 });
  const first: Moment | undefined = page.moments[0];
  const sent: Message = await flock.send(id, "hi");
  const bodies: string[] = [];
  for await (const m of flock.messages({ transport: "ws" })) bodies.push(m.body, m.from.display_name);
  try {
    await flock.me();
  } catch (e) {
    if (e instanceof FlockError) bodies.push(e.code, String(e.status));
  }
  return [moment.id, first?.author.display_name ?? "", sent.thread_id, ...bodies];
}
`;
