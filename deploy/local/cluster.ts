// The reference topology on one machine: nginx in front of three Flock nodes that share one Redis and one Postgres.
// Redis and Postgres are private instances (deploy/local/private-servers.ts: their own free ports and temp dirs,
// Postgres initialised for the occasion), so a run leaves nothing on the machine's shared servers, and stopping it
// removes every byte it wrote. Every process is started on a free 127.0.0.1 port and stopped by `stop()`.
import { spawnSync } from "node:child_process";
import { chmodSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { fileURLToPath } from "node:url";
import { Redis } from "ioredis";
import postgres from "postgres";
import { ensureNginx, nginxArgs, readTemplate, renderNginxConf } from "./nginx.ts";
import { freePort, PrivatePostgres, PrivateRedis } from "./private-servers.ts";
import { Child } from "./process.ts";

export const ROOT = fileURLToPath(new URL("../../", import.meta.url));
const MAIN = "dist/runtime/main.js";
const WEB = "web/dist/index.html";

export interface ClusterOptions {
  /** Flock nodes behind nginx (3). */
  nodes?: number;
  /** nginx's port on 127.0.0.1 (a free one when unset). */
  port?: number;
  /** Progress lines (stderr by default). */
  say?: (line: string) => void;
  /** Settings added to every node's environment (the chaos suite's scaled-up rate limits, a log level). */
  nodeEnv?: Record<string, string>;
  /** Connections nginx's worker may hold, both sides counted (2048; deploy/local/nginx.ts). */
  connections?: number;
  /**
   * The tree each node runs `dist/runtime/main.js` from, by index (the current one, ROOT, when unset): a rolling
   * upgrade starts the nodes on the previous release's tree and restarts each on this one.
   */
  roots?: string[];
}

export interface NodeInfo {
  name: string;
  url: string;
  pid: number;
  log: string;
}

export interface LocalCluster {
  /** nginx's address: the web app at `/`, the API under `/v1`, the WebSocket at `/v1/ws`. */
  url: string;
  nodes: NodeInfo[];
  /** Every process it started: nginx's master, the nodes, redis-server and the postmaster (workers and backends are theirs). */
  pids: Record<string, number>;
  /** The private Redis and Postgres URLs the nodes use. */
  redisUrl: string;
  databaseUrl: string;
  /** Where the logs, nginx's configuration and the uploaded files are (removed by stop()). */
  dir: string;
  /**
   * A planned restart of one node (`node-2`): SIGTERM (it lingers, drains and exits 0), then the same program on the
   * same port with the same settings (from the tree `root` when given: an upgrade), resolving once its /readyz answers 200. Its entries in `nodes` and `pids` name
   * the new process. Rejects if the node does not exit within `graceMs` (then it is killed) or is not ready in time.
   */
  restart(
    name: string,
    o?: { graceMs?: number; readyMs?: number; root?: string },
  ): Promise<{ stoppedMs: number; readyMs: number }>;
  stop(): Promise<void>;
}

async function healthy(url: string): Promise<boolean> {
  try {
    const r = await fetch(`${url}/healthz`, { signal: AbortSignal.timeout(1000) });
    await r.arrayBuffer();
    return r.status === 200;
  } catch {
    return false;
  }
}

async function ready(url: string): Promise<boolean> {
  try {
    const r = await fetch(`${url}/readyz`, { signal: AbortSignal.timeout(1000) });
    await r.arrayBuffer();
    return r.status === 200;
  } catch {
    return false;
  }
}

async function waitFor(what: string, cond: () => Promise<boolean>, child: Child, ms: number): Promise<void> {
  const deadline = Date.now() + ms;
  while (Date.now() < deadline) {
    if (!child.alive) throw new Error(`${what} ended (${child.ended}) while starting:\n${tail(child.logFile)}`);
    if (await cond()) return;
    await sleep(100);
  }
  throw new Error(`${what} did not come up within ${ms / 1000} s:\n${tail(child.logFile)}`);
}

function tail(file: string, lines = 20): string {
  try {
    return readFileSync(file, "utf8").trimEnd().split("\n").slice(-lines).join("\n");
  } catch {
    return "(no log)";
  }
}

/** The postmaster's pid, from the data directory the server names. */
async function postmasterPid(url: string): Promise<number> {
  const sql = postgres(url, { max: 1, onnotice: () => {} });
  try {
    const [row] = await sql<{ setting: string }[]>`select setting from pg_settings where name = 'data_directory'`;
    return Number(readFileSync(join(row!.setting, "postmaster.pid"), "utf8").split("\n")[0]);
  } finally {
    await sql.end({ timeout: 1 });
  }
}

async function redisPid(url: string): Promise<number> {
  const r = new Redis(url, { lazyConnect: true, maxRetriesPerRequest: 0 });
  try {
    await r.connect();
    return Number(/process_id:(\d+)/.exec(await r.info("server"))?.[1]);
  } finally {
    r.disconnect();
  }
}

async function createDatabase(serverUrl: string, name: string): Promise<string> {
  const sql = postgres(serverUrl, { max: 1, onnotice: () => {} });
  try {
    await sql.unsafe(`create database ${name}`);
  } finally {
    await sql.end({ timeout: 1 });
  }
  const u = new URL(serverUrl);
  u.pathname = `/${name}`;
  return u.toString();
}

export async function startLocalCluster(opts: ClusterOptions = {}): Promise<LocalCluster> {
  const say = opts.say ?? ((line: string) => process.stderr.write(`${line}\n`));
  const count = opts.nodes ?? 3;
  for (const f of [MAIN, WEB]) {
    if (!existsSync(join(ROOT, f))) throw new Error(`${f} is missing: run \`npm run build\` first`);
  }
  for (const bin of ["redis-server"]) {
    if (spawnSync("sh", ["-c", `command -v ${bin}`]).status !== 0)
      throw new Error(`${bin} is not installed: apt-get install redis-server`);
  }
  const nginxBin = ensureNginx(say);

  const dir = mkdtempSync(join(tmpdir(), "flock-cluster-"));
  // nginx's workers run as nobody under root, and read their temp paths under this directory
  chmodSync(dir, 0o711);
  const children: Child[] = [];
  let redis: PrivateRedis | undefined;
  let pg: PrivatePostgres | undefined;
  const killAll = () => {
    for (const c of children) c.kill();
  };
  process.once("exit", killAll);

  let stopped = false;
  let restartNode: LocalCluster["restart"] | undefined;
  const stop = async () => {
    if (stopped) return;
    stopped = true;
    // nodes first (SIGINT: no linger, in-flight requests answered, sockets closed with 1001), then the proxy
    // (SIGQUIT: graceful), then the servers under them
    const nodes = children.filter((c) => c.name !== "nginx");
    await Promise.all(nodes.map((c) => c.stop("SIGINT", 20_000)));
    await Promise.all(children.filter((c) => c.name === "nginx").map((c) => c.stop("SIGQUIT", 10_000)));
    await redis?.kill();
    await pg?.stop().catch(() => {});
    rmSync(dir, { recursive: true, force: true });
    process.removeListener("exit", killAll);
  };

  try {
    say("starting Redis and Postgres (private instances in a temp dir)");
    [redis, pg] = await Promise.all([PrivateRedis.start(), PrivatePostgres.start()]);
    const databaseUrl = await createDatabase(pg.url, "flock");
    const port = opts.port ?? (await freePort());
    const url = `http://127.0.0.1:${port}`;

    const ports: number[] = [];
    for (let i = 0; i < count; i++) ports.push(await freePort());
    say(`starting ${count} Flock nodes on ports ${ports.join(", ")}`);
    const nodes: NodeInfo[] = [];
    const pids: Record<string, number> = {};
    // one node's process: the same program, port and settings at every start (the first, and each restart)
    const roots = ports.map((_, i) => opts.roots?.[i] ?? ROOT);
    const startNode = async (i: number) => {
      const name = `node-${i + 1}`;
      const root = roots[i]!;
      if (!existsSync(join(root, MAIN))) throw new Error(`${join(root, MAIN)} is missing: build that tree first`);
      const p = ports[i]!;
      const log = join(dir, `${name}.log`);
      const child = await Child.start(name, process.execPath, [MAIN], {
        cwd: root,
        logFile: log,
        env: {
          PATH: process.env["PATH"] ?? "/usr/bin:/bin",
          HOME: process.env["HOME"] ?? dir,
          LANG: process.env["LANG"] ?? "C.UTF-8",
          ...(process.env["LD_PRELOAD"] ? { LD_PRELOAD: process.env["LD_PRELOAD"] } : {}),
          HOST: "127.0.0.1",
          PORT: String(p),
          DATABASE_URL: databaseUrl,
          REDIS_URL: redis!.url,
          // nginx on loopback is the one proxy: the client is the address it appends to X-Forwarded-For
          TRUST_PROXY: "1",
          FLOCK_PUBLIC_URL: url,
          // one directory for the uploads of every node (in production: storage every node mounts)
          DATA_DIR: join(dir, "data"),
          FILES_DIR: join(dir, "files"),
          LOG_LEVEL: process.env["LOG_LEVEL"] ?? "info",
          ...opts.nodeEnv,
        },
      });
      const at = children.findIndex((c) => c.name === name);
      if (at >= 0) children[at] = child;
      else children.push(child);
      await waitFor(name, () => healthy(`http://127.0.0.1:${p}`), child, 60_000);
      nodes[i] = { name, url: `http://127.0.0.1:${p}`, pid: child.pid, log };
      pids[name] = child.pid;
      return child;
    };
    await Promise.all(ports.map((_, i) => startNode(i)));
    restartNode = async (name, o = {}) => {
      const i = nodes.findIndex((n) => n.name === name);
      const old = children.find((c) => c.name === name);
      if (i < 0 || !old) throw new Error(`no node named ${name} (${nodes.map((n) => n.name).join(", ")})`);
      const t0 = performance.now();
      // the linger (FLOCK_SHUTDOWN_LINGER, 5 s) and the drain (FLOCK_SHUTDOWN_GRACE, 10 s) fit in the default bound
      await old.stop("SIGTERM", o.graceMs ?? 30_000);
      if (old.ended !== "exit code 0")
        throw new Error(`${name} ended with ${old.ended} after SIGTERM:\n${tail(old.logFile)}`);
      const stoppedMs = performance.now() - t0;
      if (o.root !== undefined) roots[i] = o.root;
      const child = await startNode(i);
      await waitFor(`${name}'s /readyz`, () => ready(nodes[i]!.url), child, o.readyMs ?? 60_000);
      return { stoppedMs, readyMs: performance.now() - t0 };
    };

    writeFileSync(
      join(dir, "nginx.conf"),
      renderNginxConf(readTemplate(), { prefix: dir, port, nodePorts: ports, connections: opts.connections }),
    );
    const check = spawnSync(nginxBin, nginxArgs(dir, true), { encoding: "utf8" });
    if (check.status !== 0)
      throw new Error(`nginx -t refused the configuration (${join(dir, "nginx.conf")}):\n${check.stderr}`);
    say(`starting nginx on ${url}`);
    const nginx = await Child.start("nginx", nginxBin, nginxArgs(dir), {
      cwd: dir,
      env: { PATH: process.env["PATH"] ?? "" },
      logFile: join(dir, "nginx.log"),
    });
    children.push(nginx);
    await waitFor("nginx", () => healthy(url), nginx, 15_000);

    pids["nginx"] = nginx.pid;
    pids["redis"] = await redisPid(redis.url);
    pids["postgres"] = await postmasterPid(pg.url);
    const restart: LocalCluster["restart"] = (name, o) => {
      if (stopped) return Promise.reject(new Error("the cluster has stopped"));
      return restartNode!(name, o);
    };
    return { url, nodes, pids, redisUrl: redis.url, databaseUrl, dir, restart, stop };
  } catch (err) {
    await stop();
    throw err;
  }
}
