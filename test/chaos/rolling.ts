// `rolling-restart`: the reference topology (deploy/local/cluster.ts: nginx in front of three nodes, private Redis and
// Postgres), SDK agents (sdk-agents.ts) talking through nginx, and every node in turn stopped with SIGTERM and started
// again, the next only once the last answers /readyz. Its clients drain to the other nodes through nginx. Judged as
// every chaos fault is (tracker.ts: lost, delivered again after an ack, duplicates in Postgres, stuck, 5xx, hangs),
// and on the clients' side: no error reaches an SDK caller, and every client receives again within a stated bound.
import { rmSync } from "node:fs";
import { setTimeout as sleep } from "node:timers/promises";
import { startLocalCluster } from "../../deploy/local/cluster.ts";
import { nodeEntry } from "../helpers/entry.ts";
import { durable } from "./faults.ts";
import { onCleanup } from "./servers.ts";
import { type SdkAgent, SdkFleet } from "./sdk-agents.ts";
import { type FaultResult, judge, judgeClients, type Phases, Tracker } from "./tracker.ts";
import { type Agent, createGroup, register } from "./traffic.ts";

export const ROLLING_RESTART = {
  name: "rolling-restart",
  description: "nginx and 3 nodes: each node in turn SIGTERM'd and started again (ready before the next), SDK agents on WebSocket and long poll",
};

/**
 * Every client receives again within this of losing its node. Measured on 2 cores shared with other work (1,000
 * agents, 150 sends/s): the slowest 1.5-3.0 s over four runs (WebSocket: its close to the next `ready`; long poll: the
 * `Retry-After: 2` of a node's refusing last second), so the bound leaves over 3x (docs/ARCHITECTURE.md, "The chaos suite").
 */
export const BACK_WITHIN_MS = 10_000;

export interface RollingOptions {
  /** SDK agents (default 1,000): half on the WebSocket, half long polling; each sends to the next. */
  agents: number;
  /** Sends per second, all agents together. */
  perSecond: number;
  warmupMs: number;
  afterMs: number;
  log: (line: string) => void;
}

/** `fn` for 0..count-1, `n` at a time (a thousand registrations at once would only queue up in nginx and the nodes). */
async function inBatches<T>(count: number, n: number, fn: (i: number) => Promise<T>): Promise<T[]> {
  const out: T[] = [];
  for (let i = 0; i < count; i += n) out.push(...(await Promise.all(Array.from({ length: Math.min(n, count - i) }, (_, j) => fn(i + j)))));
  return out;
}

export async function runRollingRestart(o: RollingOptions): Promise<FaultResult> {
  const name = ROLLING_RESTART.name;
  const say = (line: string) => o.log(`  ${name}: ${line}`);
  nodeEntry(); // refuses a build older than the sources: the cluster runs dist/
  const started = Date.now();
  const cluster = await startLocalCluster({
    say,
    // the chaos suite's limits (registrations per IP: a thousand agents from one address) and quiet logs
    nodeEnv: { LOG_LEVEL: "warn", FLOCK_LIMITS_SCALE: "10000" },
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

    const phases: Phases = { injectAt: Date.now(), endAt: 0 };
    for (const node of [...cluster.nodes]) {
      const r = await cluster.restart(node.name);
      say(`${node.name}: exited ${(r.stoppedMs / 1000).toFixed(1)} s after SIGTERM, ready ${(r.readyMs / 1000).toFixed(1)} s after it`);
    }
    phases.endAt = Date.now();
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
    const result = judge(t, { description: ROLLING_RESTART.description, graceful: true }, phases, pg);
    return judgeClients(result, t, {
      clients: o.agents,
      sdkErrors: fleet.sdkErrors,
      gaps: fleet.gaps,
      cuts: fleet.cuts,
      backWithinMs: BACK_WITHIN_MS,
    }, pg);
  } finally {
    await fleet?.stop().catch(() => {});
    await cluster.stop().catch(() => {});
  }
}
