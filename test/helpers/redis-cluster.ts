// A Redis Cluster of our own for tests: 3 masters and 3 replicas (redis-server --cluster-enabled yes, then
// redis-cli --cluster create) on free ports under a temp dir, never the shared 6379. A test may kill a master and
// wait for its replica to take over. Everything is killed and removed at teardown, and at exit after a failure.
import { type ChildProcess, execFile, spawn, spawnSync } from "node:child_process";
import { rmSync } from "node:fs";
import { join } from "node:path";
import { Redis } from "ioredis";
import { freePort, register, type Teardown, tempDir } from "./private-servers.ts";
import { probing, until } from "./wait.ts";

export interface ClusterNode {
  port: number;
  role: "master" | "replica";
  child: ChildProcess;
}

export interface RedisCluster {
  /** `redis+cluster://` naming the masters (REDIS_URL). */
  url: string;
  nodes: ClusterNode[];
  /** kill -9 a master, resolved once its process is gone. */
  killMaster(port: number): Promise<void>;
  /** Wait until a replica of the killed master is a master and the cluster says ok; the ms since the kill. */
  waitForFailover(killedPort: number): Promise<number>;
  /** The master port that owns a slot now. */
  ownerOf(slot: number): Promise<number>;
  /**
   * Move one slot to another master as `redis-cli --cluster reshard` does (SETSLOT IMPORTING and MIGRATING, MIGRATE
   * of its keys in one call, SETSLOT NODE on every master), holding the slot half-moved after its keys have moved
   * until `halfMoved` resolves: meanwhile the old owner answers ASK for them. Resolves with the number of keys moved.
   */
  moveSlot(slot: number, toPort: number, halfMoved: () => Promise<void>): Promise<number>;
  stop(): Promise<void>;
}

/** Whether this machine can run one (redis-server and redis-cli on PATH). */
export function clusterAvailable(): boolean {
  return ["redis-server", "redis-cli"].every((c) => spawnSync(c, ["--version"], { stdio: "ignore" }).status === 0);
}

async function ask<T>(port: number, fn: (r: Redis) => Promise<T>): Promise<T> {
  const r = new Redis({
    port,
    host: "127.0.0.1",
    lazyConnect: true,
    maxRetriesPerRequest: 0,
    retryStrategy: () => null,
    connectTimeout: 1000,
  });
  r.on("error", () => {});
  try {
    await r.connect();
    return await fn(r);
  } finally {
    r.disconnect();
  }
}

const myId = (port: number) => ask(port, (r) => r.call("CLUSTER", "MYID") as Promise<string>);
const clusterInfo = (port: number) => ask(port, (r) => r.call("CLUSTER", "INFO") as Promise<string>);
const roleOf = (port: number) => ask(port, async (r) => ((await r.call("ROLE")) as string[])[0]);

export async function startRedisCluster(t?: Teardown, opts: { nodeTimeoutMs?: number } = {}): Promise<RedisCluster> {
  const dir = tempDir("cluster");
  const nodeTimeout = opts.nodeTimeoutMs ?? 1000;
  const nodes: ClusterNode[] = [];
  const cleanup = () => {
    for (const n of nodes) n.child.kill("SIGKILL");
    rmSync(dir, { recursive: true, force: true });
  };
  const stop = async () => {
    await Promise.all(
      nodes.map((n) =>
        n.child.exitCode !== null || n.child.signalCode !== null
          ? undefined
          : new Promise((r) => (n.child.once("exit", r), n.child.kill("SIGKILL"))),
      ),
    );
  };
  register(t, cleanup, stop);
  for (let i = 0; i < 6; i++) {
    const port = await freePort();
    const args = ["--port", String(port), "--bind", "127.0.0.1", "--dir", dir, "--save", "", "--appendonly", "no"];
    args.push("--cluster-enabled", "yes", "--cluster-config-file", join(dir, `nodes-${port}.conf`));
    args.push(
      "--cluster-node-timeout",
      String(nodeTimeout),
      "--protected-mode",
      "no",
      "--dbfilename",
      `dump-${port}.rdb`,
    );
    nodes.push({ port, role: i < 3 ? "master" : "replica", child: spawn("redis-server", args, { stdio: "ignore" }) });
  }
  for (const n of nodes) {
    await until(
      probing(async () => (await ask(n.port, (r) => r.ping())) === "PONG"),
      { ms: 10_000, every: 20, what: `cluster node ${n.port}` },
    );
  }
  // redis-cli makes the first three masters and gives each one of the last three as its replica
  await new Promise<void>((resolve, reject) => {
    execFile(
      "redis-cli",
      ["--cluster", "create", ...nodes.map((n) => `127.0.0.1:${n.port}`), "--cluster-replicas", "1", "--cluster-yes"],
      { timeout: 30_000 },
      (err, out, errOut) =>
        err ? reject(new Error(`redis-cli --cluster create failed: ${err.message}\n${out}${errOut}`)) : resolve(),
    );
  });
  const ok = async (port: number) => (await clusterInfo(port)).includes("cluster_state:ok");
  for (const n of nodes)
    await until(
      probing(() => ok(n.port)),
      { ms: 30_000, every: 20, what: `cluster state ok on ${n.port}` },
    );
  // the roles as the cluster has them, and every replica synced with its master
  for (const n of nodes) n.role = (await roleOf(n.port)) === "master" ? "master" : "replica";
  for (const n of nodes.filter((x) => x.role === "replica")) {
    const synced = async () => (await ask(n.port, (r) => r.info("replication"))).includes("master_link_status:up");
    await until(probing(synced), { ms: 30_000, every: 20, what: `replica ${n.port} in sync` });
  }
  const masters = nodes.filter((n) => n.role === "master");
  const killedAt = new Map<number, number>();
  const ownerOf = async (slot: number): Promise<number> => {
    const live = nodes.find((n) => n.role === "master")!;
    const ranges = (await ask(live.port, (r) => r.call("CLUSTER", "SLOTS"))) as [
      number,
      number,
      [string, number, string],
    ][];
    const range = ranges.find(([from, to]) => slot >= from && slot <= to);
    if (!range) throw new Error(`slot ${slot} has no owner`);
    return range[2][1];
  };
  return {
    url: `redis+cluster://${masters.map((m) => `127.0.0.1:${m.port}`).join(",")}`,
    nodes,
    async killMaster(port) {
      const n = nodes.find((x) => x.port === port && x.role === "master");
      if (!n) throw new Error(`${port} is not a master`);
      const gone = new Promise((r) => n.child.once("exit", r));
      killedAt.set(port, performance.now());
      n.child.kill("SIGKILL");
      await gone;
    },
    async waitForFailover(killedPort) {
      const started = killedAt.get(killedPort);
      if (started === undefined) throw new Error(`${killedPort} was not killed`);
      const killed = nodes.find((x) => x.port === killedPort)!;
      const others = nodes.filter((x) => x !== killed);
      const promoted = async () => {
        for (const n of others) if (!(await ok(n.port))) return false;
        // a former replica now a master: 4 masters counted among the living would be wrong, 3 is right
        const roles = await Promise.all(others.map((n) => roleOf(n.port)));
        return roles.filter((r) => r === "master").length === 3;
      };
      await until(probing(promoted), { ms: 30_000, every: 20, what: `failover of ${killedPort}` });
      const ms = performance.now() - started;
      for (const n of others) {
        n.role = (await roleOf(n.port)) === "master" ? "master" : "replica";
      }
      killed.role = "replica";
      return ms;
    },
    ownerOf,
    async moveSlot(slot, toPort, halfMoved) {
      const fromPort = await ownerOf(slot);
      if (fromPort === toPort) return 0;
      const [fromId, toId] = await Promise.all([myId(fromPort), myId(toPort)]);
      await ask(toPort, (r) => r.call("CLUSTER", "SETSLOT", slot, "IMPORTING", fromId));
      await ask(fromPort, (r) => r.call("CLUSTER", "SETSLOT", slot, "MIGRATING", toId));
      const keys = (await ask(fromPort, (r) => r.call("CLUSTER", "GETKEYSINSLOT", slot, 1000))) as string[];
      if (keys.length > 0)
        await ask(fromPort, (r) => r.call("MIGRATE", "127.0.0.1", toPort, "", 0, 5000, "KEYS", ...keys));
      await halfMoved();
      // the new owner first, then the old one, then the rest (the order redis-cli uses)
      const rest = nodes
        .filter((n) => n.role === "master" && n.port !== fromPort && n.port !== toPort)
        .map((n) => n.port);
      for (const port of [toPort, fromPort, ...rest])
        await ask(port, (r) => r.call("CLUSTER", "SETSLOT", slot, "NODE", toId));
      return keys.length;
    },
    stop: async () => {
      await stop();
      cleanup();
    },
  };
}
