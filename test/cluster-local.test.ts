// `npm run cluster:local` end to end: the command as a user types it, driven through its nginx by real clients (the
// web app's page and assets, agents registered with fetch, a WebSocket that receives messages sent through each node
// directly, so at least two of them crossed nodes, a long poll woken by a send, an empty long poll held the full 30 s),
// then SIGTERM and a check that every process it started is gone. Skipped only when nginx is not installed and cannot
// be (no root, no package mirror): the script's exit 69.
import { type ChildProcess, spawn } from "node:child_process";
import { readdirSync, readFileSync } from "node:fs";
import t from "tap";
import WebSocket from "ws";
import type { LocalCluster } from "../deploy/local/cluster.ts";
import { readTemplate, renderNginxConf } from "../deploy/local/nginx.ts";
import { ROOT } from "./helpers/entry.ts";
import { alive } from "./helpers/process.ts";
import { until } from "./helpers/wait.ts";

t.setTimeout(420_000);

type Started = Pick<LocalCluster, "url" | "dir" | "pids"> & { nodes: Record<string, string> };

/** Every process's parent, from /proc. */
function parents(): Map<number, number> {
  const out = new Map<number, number>();
  for (const d of readdirSync("/proc")) {
    if (!/^\d+$/.test(d)) continue;
    try {
      const stat = readFileSync(`/proc/${d}/stat`, "utf8");
      out.set(Number(d), Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]));
    } catch {
      // gone meanwhile
    }
  }
  return out;
}

/** `root` and all its descendants now. */
function tree(root: number): number[] {
  const ppid = parents();
  const found = [root];
  for (let i = 0; i < found.length; i++) for (const [pid, parent] of ppid) if (parent === found[i]) found.push(pid);
  return found;
}

/** Runs `npm run cluster:local` until it prints its address (or ends: exit 69 means no nginx). */
function start(): { child: ChildProcess; output: () => string; ready: Promise<Started | { unavailable: string }> } {
  const child = spawn("npm", ["run", "cluster:local"], {
    cwd: ROOT,
    env: { ...process.env, LOG_LEVEL: "warn" },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let out = "";
  let err = "";
  child.stdout!.on("data", (b: Buffer) => (out += b.toString()));
  child.stderr!.on("data", (b: Buffer) => (err += b.toString()));
  const ready = new Promise<Started | { unavailable: string }>((resolve, reject) => {
    const check = () => {
      const url = /Flock is serving at (http:\/\/127\.0\.0\.1:\d+)\//.exec(out)?.[1];
      const procs = /^processes: (.*)$/m.exec(out)?.[1];
      const nodes = /^nodes: (.*)$/m.exec(out)?.[1];
      const dir = /logs: (\S+)$/m.exec(out)?.[1];
      if (url && procs && nodes && dir) {
        const pairs = (s: string) =>
          s
            .trim()
            .split(" ")
            .map((kv) => kv.split("=") as [string, string]);
        resolve({
          url,
          dir,
          nodes: Object.fromEntries(pairs(nodes)),
          pids: Object.fromEntries(pairs(procs).map(([k, v]) => [k, Number(v)])),
        });
      }
    };
    child.stdout!.on("data", check);
    child.once("exit", (code) => {
      if (code === 69) resolve({ unavailable: err.trim().split("\n").pop() ?? "" });
      else reject(new Error(`npm run cluster:local ended (${code}) before serving:\n${out}${err}`));
    });
  });
  return { child, output: () => out + err, ready };
}

async function json(res: Response): Promise<Record<string, unknown>> {
  return (await res.json()) as Record<string, unknown>;
}

async function register(url: string, name: string): Promise<{ id: string; token: string }> {
  const r = await fetch(`${url}/v1/agents/register`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ display_name: name }),
  });
  if (r.status !== 201) throw new Error(`register ${name}: ${r.status} ${await r.text()}`);
  const b = (await r.json()) as { agent: { id: string }; token: string };
  return { id: b.agent.id, token: b.token };
}

async function send(base: string, from: { token: string }, to: string, body: string): Promise<number> {
  const r = await fetch(`${base}/v1/messages`, {
    method: "POST",
    headers: { "content-type": "application/json", authorization: `Bearer ${from.token}` },
    body: JSON.stringify({ to, body }),
  });
  await r.arrayBuffer();
  return r.status;
}

t.test("the private instance's configuration is deploy/nginx.conf with local addresses and paths", async (t) => {
  const conf = renderNginxConf(readTemplate(), { prefix: "/tmp/x", port: 9000, nodePorts: [9001, 9002, 9003] });
  t.same(
    conf.match(/^\s*server 127\.0\.0\.1:\d+ /gm)?.map((l) => l.trim()),
    ["server 127.0.0.1:9001", "server 127.0.0.1:9002", "server 127.0.0.1:9003"],
  );
  t.match(conf, /^\s*listen 127\.0\.0\.1:9000;$/m);
  t.notMatch(conf, /^[^#\n]*(\/var\/|\/run\/|10\.0\.0\.)/m, "no production path or address is left outside comments");
  t.match(conf, /proxy_read_timeout 45s;/, "the template's own settings stay");
  t.match(conf, /^\s*worker_connections 2048;$/m, "a private instance's worker holds 2048 connections by default");
  const big = renderNginxConf(readTemplate(), { prefix: "/tmp/x", port: 9000, nodePorts: [9001], connections: 4024 });
  t.match(big, /^\s*worker_connections 4024;$/m);
  t.match(big, /^worker_rlimit_nofile 8048;$/m, "and twice as many descriptors");
});

t.test("npm run cluster:local serves Flock through nginx and stops everything", async (t) => {
  const run = start();
  let stopped = false;
  t.teardown(() => {
    // a failure midway: stop it the way a user would; the script stops the rest
    if (!stopped && run.child.exitCode === null) run.child.kill("SIGTERM");
  });
  const started = await run.ready;
  if ("unavailable" in started) {
    t.pass("npm run cluster:local", {
      skip: `nginx is not installed and cannot be installed here: ${started.unavailable}`,
    });
    return;
  }
  const { url, dir, nodes, pids } = started;
  t.same(
    Object.keys(pids).sort(),
    ["nginx", "node-1", "node-2", "node-3", "postgres", "redis"],
    "it names every process it started",
  );
  // the processes under npm (the script, nginx's master and worker, the nodes, redis-server) and the postmaster
  const everyPid = new Set([...tree(run.child.pid!), ...tree(pids["postgres"]!), ...Object.values(pids)]);
  t.ok(everyPid.size >= 8, `${everyPid.size} processes to stop`);

  // the web app, through nginx
  const page = await fetch(`${url}/`);
  const html = await page.text();
  t.equal(page.status, 200, "GET / answers 200");
  t.match(page.headers.get("content-type") ?? "", /text\/html/);
  t.match(html, /<title>Flock<\/title>/, "the web app's page");
  const script = /src="(\/assets\/[^"]+\.js)"/.exec(html)?.[1];
  t.ok(script, "the page names its script");
  const asset = await fetch(`${url}${script}`);
  await asset.arrayBuffer();
  t.equal(asset.status, 200, `${script} answers 200 through nginx`);

  // agents registered through nginx
  const sender = await register(url, "Sender");
  const listener = await register(url, "Listener");
  const poller = await register(url, "Poller");
  const idler = await register(url, "Idler");

  // a long poll held for its full 30 s: nginx's timeouts leave it alone (it answers empty, not a 504)
  const idleStarted = performance.now();
  const idlePoll = fetch(`${url}/v1/messages/pending?timeout=30`, {
    headers: { authorization: `Bearer ${idler.token}` },
  }).then(async (r) => ({
    status: r.status,
    body: await json(r),
    seconds: (performance.now() - idleStarted) / 1000,
  }));
  // a long poll that a send wakes
  const poll = fetch(`${url}/v1/messages/pending?timeout=20`, {
    headers: { authorization: `Bearer ${poller.token}` },
  }).then(async (r) => ({
    status: r.status,
    body: await json(r),
  }));

  // a WebSocket through nginx, and one message sent through each node directly
  const ws = new WebSocket(`${url.replace("http", "ws")}/v1/ws`, {
    headers: { authorization: `Bearer ${listener.token}` },
  });
  const frames: { type: string; message?: { body: string } }[] = [];
  ws.on("message", (data: Buffer) => frames.push(JSON.parse(data.toString()) as (typeof frames)[number]));
  const closed = new Promise<void>((resolve) => ws.once("close", () => resolve()));
  await until(() => frames.some((f) => f.type === "ready"), {
    ms: 10_000,
    what: "the socket's ready frame through nginx",
  });
  for (const [name, nodeUrl] of Object.entries(nodes)) {
    t.equal(
      await send(nodeUrl, sender, listener.id, `via ${name}`),
      201,
      `a send through ${name} directly answers 201`,
    );
  }
  t.equal(await send(url, sender, poller.id, "wake up"), 201, "a send through nginx answers 201");
  const bodies = () => frames.filter((f) => f.type === "message").map((f) => f.message!.body);
  await until(() => bodies().length >= 3, {
    ms: 10_000,
    what: () => `three messages on the socket (got ${JSON.stringify(bodies())})`,
  });
  t.same(
    bodies().sort(),
    ["via node-1", "via node-2", "via node-3"],
    "the socket through nginx got the message sent through every node",
  );
  ws.close(1000);
  await closed;

  // which node held the socket: nginx logs the upstream of the 101 when the socket closes
  const wsLine = () =>
    readFileSync(`${dir}/access.log`, "utf8")
      .split("\n")
      .find((l) => l.includes('"GET /v1/ws" 101'));
  await until(() => wsLine() !== undefined, { ms: 5_000, what: "nginx's log line of the socket" });
  const wsNode = Object.entries(nodes).find(([, u]) =>
    wsLine()!.includes(`upstream=${u.slice("http://".length)}`),
  )?.[0];
  t.ok(wsNode, `nginx's log names the node that held the socket (${wsNode})`);
  t.equal(
    bodies().filter((b) => b !== `via ${wsNode}`).length,
    2,
    "two of the messages were sent through other nodes than the socket's",
  );

  const woken = await poll;
  t.equal(woken.status, 200, "the long poll answers 200 through nginx");
  const msgs = woken.body["messages"] as { id: string; body: string }[];
  t.same(
    msgs.map((m) => m.body),
    ["wake up"],
    "the long poll got the message",
  );
  const ack = await fetch(`${url}/v1/messages/${msgs[0]!.id}/ack`, {
    method: "POST",
    headers: { authorization: `Bearer ${poller.token}` },
  });
  await ack.arrayBuffer();
  t.equal(ack.status, 204, "its ack through nginx answers 204");

  const idle = await idlePoll;
  t.equal(idle.status, 200, "the 30-second long poll answers 200 through nginx");
  t.same(idle.body["messages"], [], "with no messages");
  t.ok(idle.seconds >= 29.5, `after its full 30 s (${idle.seconds.toFixed(1)} s)`);

  // Ctrl-C's other half: SIGTERM to npm stops everything
  const exited = new Promise<number | null>((resolve) => run.child.once("exit", (code) => resolve(code)));
  stopped = true;
  run.child.kill("SIGTERM");
  const code = await exited;
  t.match(run.output(), /stopped; every process is gone/, "the script says it stopped everything");
  t.ok(code === 0 || code === 143 || code === null, `npm exits (${code})`);
  await until(() => [...everyPid].every((p) => !alive(p)), {
    ms: 10_000,
    what: () => `every process gone (alive: ${[...everyPid].filter(alive).join(", ")})`,
  });
  t.pass(`all ${everyPid.size} processes are gone`);
  await t.rejects(fetch(`${url}/healthz`), "nothing listens on nginx's port any more");
  t.throws(() => readdirSync(dir), "its temp dir is removed");
});
