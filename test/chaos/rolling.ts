// `rolling-restart`: the reference topology (deploy/local/cluster.ts: nginx in front of three nodes, private Redis and
// Postgres), SDK agents (sdk-agents.ts) talking through nginx, and every node in turn stopped with SIGTERM and started
// again, the next only once the last answers /readyz. Its clients drain to the other nodes through nginx. Judged as
// every chaos fault is (tracker.ts: lost, delivered again after an ack, duplicates in Postgres, stuck, 5xx, hangs),
// and on the clients' side: no error reaches an SDK caller, and every client receives again within a stated bound.
// `rolling-upgrade` is the same roll from the previous release to this tree (previous-release.ts: its tag checked out
// and built in a temp folder): the three nodes start on the previous release, and each is started again on this one,
// so for most of the roll old and new nodes serve side by side. It also checks, in Redis, that the nodes ran mixed
// (before: none announced this release; after: all three did).
import { copyFileSync, existsSync, mkdirSync, readFileSync, rmSync } from "node:fs";
import { basename, join } from "node:path";
import { monitorEventLoopDelay } from "node:perf_hooks";
import { Redis } from "ioredis";
import { setTimeout as sleep } from "node:timers/promises";
import { ROOT, startLocalCluster } from "../../deploy/local/cluster.ts";
import { redisKeys } from "../../runtime/engines/redis/keys.ts";
import { RedisNodes } from "../../runtime/engines/redis/nodes.ts";
import { defineScripts } from "../../runtime/engines/redis/scripts.ts";
import { parseRelease, thisRelease } from "../../runtime/release.ts";
import { nodeEntry } from "../helpers/entry.ts";
import { durable } from "./faults.ts";
import { onCleanup } from "./servers.ts";
import { type SdkAgent, SdkFleet } from "./sdk-agents.ts";
import { baselineRps } from "./machine-speed.ts";
import { buildRelease, previousRelease } from "./previous-release.ts";
import { type FaultResult, judge, judgeClients, type Phases, Tracker } from "./tracker.ts";
import { type Agent, createGroup, register } from "./traffic.ts";

export const ROLLING_RESTART = {
  name: "rolling-restart",
  description:
    "nginx and 3 nodes: each node in turn SIGTERM'd and started again (ready before the next), SDK agents on WebSocket and long poll",
};

export const ROLLING_UPGRADE = {
  name: "rolling-upgrade",
  description:
    "nginx and 3 nodes of the previous release (its tag, built in a temp folder): each in turn SIGTERM'd and started on this tree",
};

/**
 * Every client receives again within this of losing its node. Measured on 2 cores shared with other work (1,000
 * agents, 150 sends/s): the slowest 1.5-3.0 s over four runs (WebSocket: its close to the next `ready`; long poll: the
 * `Retry-After: 2` of a node's refusing last second), so the bound leaves over 3x (docs/ARCHITECTURE.md, "The chaos suite").
 */
export const BACK_WITHIN_MS = 10_000;

/**
 * The machine speed (bare-uWS HTTP baseline, req/s: machine-speed.ts) at and above which the fault runs the load it is
 * given (1,000 agents at 150 sends/s by default), measured on machines of 47,000-56,000 req/s. Below it the agents and
 * the rate are scaled down in proportion: the harness (every agent in one Node process, which also probes the nodes'
 * /readyz) needs the same share of a core at any speed. Unscaled, on a 2-core machine of 10,400 req/s, it fell behind:
 * its event loop lagged past the probes' 1 s timeout, so a node ready in 2 s read as ready after 60-80 s, and its
 * clients' requests timed out and were retried, which loaded it more (docs/OPERATIONS.md, "Upgrades and restarts").
 */
export const FULL_LOAD_RPS = 40_000;
/**
 * Each node is ready within this of its SIGTERM: its linger (FLOCK_SHUTDOWN_LINGER, 5 s) and drain (at most
 * FLOCK_SHUTDOWN_GRACE, 10 s), then its process's start (module loading and the parts: 1.2-2.4 s measured on a 2-core
 * machine of 11,000-12,500 req/s, the release check's 300 ms wait and the migrations included) and one /readyz.
 */
export const READY_WITHIN_MS = 30_000;
/** The least load a scaled run keeps (a roll under it would prove little). */
const MIN_AGENTS = 100;
const MIN_RATE = 15;
/**
 * The harness's event loop delayed past this during the roll: its own timings (its readiness probes' 1 s timeout, the
 * 5 s hang bound, the latencies) would be its own, not the nodes'. Half the hang bound. Measured: unscaled on a machine
 * of 12,453 req/s, p99 2.4 s and max 3.5 s; scaled, max 0.3-1.3 s (the latter with a busy loop beside it).
 */
export const HARNESS_LAG_MS = 2_500;

/** The load to run on a machine whose baseline reads `rps`: the one asked for, or scaled down in proportion. */
export function scaledLoad(
  agents: number,
  perSecond: number,
  rps: number,
): { agents: number; perSecond: number; factor: number } {
  const factor = Math.min(1, rps / FULL_LOAD_RPS);
  if (factor === 1) return { agents, perSecond, factor };
  return {
    agents: Math.min(agents, Math.max(MIN_AGENTS, Math.round((agents * factor) / 4) * 4)),
    perSecond: Math.min(perSecond, Math.max(MIN_RATE, Math.round(perSecond * factor))),
    factor,
  };
}

export interface RollingOptions {
  /** SDK agents (default 1,000): half on the WebSocket, half long polling; each sends to the next. */
  agents: number;
  /** Sends per second, all agents together. */
  perSecond: number;
  warmupMs: number;
  afterMs: number;
  log: (line: string) => void;
  /** Run the load given whatever the machine's speed (`--full-load`): not scaled to it (FULL_LOAD_RPS). */
  fullLoad?: boolean;
  /** Where to copy the nodes' and nginx's logs at the end (`--logs`); otherwise they go with the cluster's temp dir. */
  logs?: string;
}

/**
 * A node's latest start as its log's `flock listening` line tells it (runtime/server.ts): the process's age when it
 * listened (module loading included), the start itself and its parts of 100 ms or more (the slowest first), and from
 * its listening to `readyAt` (when its /readyz answered 200).
 */
export function startTimings(logFile: string, readyAt: number): string {
  const line = readFileSync(logFile, "utf8")
    .split("\n")
    .reverse()
    .find((l) => l.includes('"msg":"flock listening"'));
  if (!line) return "no start line in its log";
  const o = JSON.parse(line) as { time?: number; startMs?: number; uptimeMs?: number; parts?: Record<string, number> };
  if (o.time === undefined || o.startMs === undefined || o.uptimeMs === undefined)
    return "its start line has no timings";
  const slow = Object.entries(o.parts ?? {})
    .filter(([, ms]) => ms >= 100)
    .sort((a, b) => b[1] - a[1]);
  const s = (ms: number) => `${(ms / 1000).toFixed(1)} s`;
  return (
    `listening ${s(o.uptimeMs)} after its exec (the start ${s(o.startMs)} of it${slow.length ? `: ${slow.map(([p, ms]) => `${p} ${s(ms)}`).join(", ")}` : ""}), ` +
    `ready ${s(readyAt - o.time)} after listening`
  );
}

/** `fn` for 0..count-1, `n` at a time (a thousand registrations at once would only queue up in nginx and the nodes). */
async function inBatches<T>(count: number, n: number, fn: (i: number) => Promise<T>): Promise<T[]> {
  const out: T[] = [];
  for (let i = 0; i < count; i += n)
    out.push(...(await Promise.all(Array.from({ length: Math.min(n, count - i) }, (_, j) => fn(i + j)))));
  return out;
}

/**
 * What each live node announced in the registry (a node of 0.1.0 announces nothing: `-`), e.g. `0.2.0 0.2.0 -`. Read
 * through the runtime's own registry (runtime/engines/nodes.ts, its Redis engine, the nodes' default prefix), so this
 * follows its key layout.
 */
async function announced(redisUrl: string): Promise<string[]> {
  const r = new Redis(redisUrl, { lazyConnect: true, maxRetriesPerRequest: 1 });
  try {
    await r.connect();
    const live = await new RedisNodes(defineScripts(r), redisKeys("flock:")).live(Date.now());
    return live.map((n) => parseRelease(n.announced)?.release ?? "-").sort();
  } finally {
    r.disconnect();
  }
}

export function runRollingRestart(o: RollingOptions): Promise<FaultResult> {
  return runRolling(ROLLING_RESTART, o);
}

export function runRollingUpgrade(o: RollingOptions): Promise<FaultResult> {
  return runRolling(ROLLING_UPGRADE, o, true);
}

async function runRolling(
  fault: { name: string; description: string },
  o: RollingOptions,
  upgrade = false,
): Promise<FaultResult> {
  const name = fault.name;
  const say = (line: string) => o.log(`  ${name}: ${line}`);
  nodeEntry(); // refuses a build older than the sources: the cluster runs dist/
  let from: string | undefined;
  if (upgrade) {
    const rel = previousRelease();
    from = buildRelease(rel, say);
    say(`from ${rel.version} to this tree (${thisRelease().release})`);
  }
  // the machine first: the load is scaled to its speed (FULL_LOAD_RPS)
  const rps = await baselineRps();
  const scaled = o.fullLoad
    ? { agents: o.agents, perSecond: o.perSecond, factor: 1 }
    : scaledLoad(o.agents, o.perSecond, rps);
  const loadNote: [string, string] = [
    "load",
    `${scaled.agents} agents at ${scaled.perSecond}/s (machine: bare-uWS baseline ${rps} req/s` +
      (scaled.factor < 1
        ? `, under ${FULL_LOAD_RPS}: ${o.agents} at ${o.perSecond}/s scaled to ${Math.round(scaled.factor * 100)}%)`
        : o.fullLoad
          ? ", not scaled: --full-load)"
          : ")"),
  ];
  say(loadNote[1]);
  o = { ...o, agents: scaled.agents, perSecond: scaled.perSecond };
  const started = Date.now();
  const cluster = await startLocalCluster({
    roots: from ? [from, from, from] : undefined,
    say,
    // the chaos suite's limits (registrations per IP: a thousand agents from one address) and quiet logs
    // (info: a few lines a start, among them each start's timings)
    nodeEnv: { LOG_LEVEL: "info", FLOCK_LIMITS_SCALE: "10000" },
    // each client holds a connection on either side of nginx, and its sends and acks one more now and then
    connections: Math.max(2048, o.agents * 3 + 1024),
  });
  // a run stopped by a signal: the cluster's own exit hook kills its processes, this removes its temp dir
  onCleanup(() => rmSync(cluster.dir, { recursive: true, force: true }));
  let fleet: SdkFleet | undefined;
  try {
    say(`up in ${((Date.now() - started) / 1000).toFixed(1)} s at ${cluster.url}; registering ${o.agents} agents`);
    const agents: Agent[] = await inBatches(o.agents, 50, (i) => register(cluster.url, `chaos-${name}-${i}`));
    // each agent sends to the next; in two of every four the two share a group of their own (one recipient, as the
    // tracker follows), the others talk directly; even agents receive by WebSocket, odd ones by long poll
    const sdkAgents: SdkAgent[] = await inBatches(o.agents, 50, async (i) => {
      const to = agents[(i + 1) % o.agents]!;
      const group = i % 4 >= 2 ? await createGroup(cluster.url, agents[i]!, to) : undefined;
      return { ...agents[i]!, index: i, via: i % 2 === 0 ? "ws" : "poll", to, group };
    });
    const t = new Tracker(name);
    fleet = new SdkFleet(t, cluster.url, sdkAgents);
    fleet.receive();
    const f = fleet;
    const deadline = Date.now() + 60_000;
    while (f.receiving < o.agents && Date.now() < deadline) await sleep(100);
    if (f.receiving < o.agents) throw new Error(`only ${f.receiving} of ${o.agents} agents were receiving after 60 s`);
    say(`${o.agents} agents receiving (${((Date.now() - started) / 1000).toFixed(1)} s); sending ${o.perSecond}/s`);
    fleet.send(o.perSecond);
    await sleep(o.warmupMs);

    const before = upgrade ? await announced(cluster.redisUrl) : [];
    const phases: Phases = { injectAt: Date.now(), endAt: 0 };
    // the harness's own event loop over the roll: when it lags, what it measures (readiness, hangs, latencies) is itself
    const lag = monitorEventLoopDelay({ resolution: 20 });
    lag.enable();
    const starts: [string, string][] = [];
    const slowStarts: string[] = [];
    for (const node of [...cluster.nodes]) {
      const r = await cluster.restart(node.name, upgrade ? { root: ROOT } : {});
      const timings = startTimings(node.log, Date.now());
      if (r.readyMs > READY_WITHIN_MS) slowStarts.push(`${node.name} ${(r.readyMs / 1000).toFixed(1)} s`);
      starts.push([
        `${node.name} SIGTERM to exit, to ready`,
        `${(r.stoppedMs / 1000).toFixed(1)} s, ${(r.readyMs / 1000).toFixed(1)} s of at most ${READY_WITHIN_MS / 1000} (${timings})`,
      ]);
      say(
        `${node.name}: exited ${(r.stoppedMs / 1000).toFixed(1)} s after SIGTERM, ready ${(r.readyMs / 1000).toFixed(1)} s after it${upgrade ? ` (${(await announced(cluster.redisUrl)).join(" ")})` : ""}; ${timings}`,
      );
    }
    phases.endAt = Date.now();
    lag.disable();
    const lagP99 = lag.percentile(99) / 1e6;
    const lagMax = lag.max / 1e6;
    const after = upgrade ? await announced(cluster.redisUrl) : [];
    say(`rolled in ${((phases.endAt - phases.injectAt) / 1000).toFixed(1)} s; traffic goes on`);
    await sleep(o.afterMs);

    await fleet.stopSending();
    const drainStart = Date.now();
    const receivers = sdkAgents.map((a) => a.to);
    while (!t.drained(Date.now())) await sleep(100);
    const committed = (await durable(cluster.databaseUrl, name, receivers)).committed;
    while (!t.drained(Date.now(), committed)) await sleep(100);
    await sleep(1_000); // a moment more for late redeliveries to show
    say(`drained in ${((Date.now() - drainStart) / 1000).toFixed(1)} s`);
    await fleet.stop();
    const pg = await durable(cluster.databaseUrl, name, receivers);
    const result = judge(t, { description: fault.description, graceful: true }, phases, pg);
    if (upgrade) {
      // the roll really went from nodes that announce nothing (or an older release) to three of this release
      const mine = thisRelease().release;
      if (before.length !== 3 || before.includes(mine))
        result.failures.push(
          `before the roll the live nodes announced [${before.join(", ")}], not three of an earlier release`,
        );
      if (after.length !== 3 || after.some((r) => r !== mine))
        result.failures.push(`after the roll the live nodes announced [${after.join(", ")}], not three of ${mine}`);
      // and neither release dropped a message of the other's: each logs one it cannot decode (both releases' words)
      const dropped = cluster.nodes.map(
        (n) =>
          readFileSync(n.log, "utf8")
            .split("\n")
            .filter((l) => l.includes("malformed message from another node dropped")).length,
      );
      say(`node-to-node messages dropped as unreadable, by node log: ${dropped.join(", ")}`);
      if (dropped.some((n) => n > 0))
        result.failures.push(`node-to-node messages one release could not read from the other: ${dropped.join(" + ")}`);
    }
    result.notes = [
      ...(result.notes ?? []),
      loadNote,
      ...starts,
      [
        "harness event-loop delay in the roll",
        `p99 ${lagP99.toFixed(0)} ms, max ${lagMax.toFixed(0)} ms (bound ${HARNESS_LAG_MS} ms: past it the harness times itself, not the nodes)`,
      ],
    ];
    if (slowStarts.length)
      result.failures.push(
        `nodes not ready within ${READY_WITHIN_MS / 1000} s of their SIGTERM: ${slowStarts.join(", ")}`,
      );
    if (lagMax > HARNESS_LAG_MS)
      result.failures.push(
        `the harness's event loop lagged ${(lagMax / 1000).toFixed(1)} s in the roll (the machine is too busy for this load: its timings are the harness's)`,
      );
    return judgeClients(
      result,
      t,
      {
        clients: o.agents,
        sdkErrors: fleet.sdkErrors,
        gaps: fleet.gaps,
        cuts: fleet.cuts,
        backWithinMs: BACK_WITHIN_MS,
      },
      pg,
    );
  } finally {
    await fleet?.stop().catch(() => {});
    if (o.logs) {
      mkdirSync(o.logs, { recursive: true });
      for (const f of [...cluster.nodes.map((n) => n.log), join(cluster.dir, "nginx.log")]) {
        if (existsSync(f)) copyFileSync(f, join(o.logs, `${name}-${basename(f)}`));
      }
    }
    await cluster.stop().catch(() => {});
  }
}
