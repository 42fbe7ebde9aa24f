// Held connections at scale (issue 35): `npm run bench -- --scenario connections [--mode one|six|all]`.
//
// Each mode starts its nodes (the compiled node, `npm start`'s entry) on the bench's Postgres and Redis (a schema and
// key prefix of its own), registers one agent per socket, puts the agents in groups of 999 (each owned by an agent
// that holds no socket, members spread over every client process and node), and opens every socket, authenticated,
// from client processes of their own (bench/lib/conn-client.ts) on their own loopback addresses:
//   1. in two waves of half each: the node's RSS (the median of a reading a second over 3 s, 5 s after a wave) and CPU
//      after each, so the memory and CPU each added connection costs are the slope between the waves (free of the
//      first wave's one-time growth), and the connect rate is the second wave's;
//   2. held idle for 10 s: the event-loop lag p99 of every node;
//   3. one message to each group: the time until every socket has it; then, in a mode with a big group (six nodes:
//      10,000 members), that group's owner sends BIG_RATE messages a second for BIG_SECONDS through every node in
//      turn: a tenth of the members poll (agents of their own, in one more client process), the rest are sockets of
//      step 1 spread over every node; each receiver acks cumulatively as the SDK does; the deliveries a second, the
//      latency from send to receipt (p50, p99, max), receipts missing and duplicated, the nodes' lag p99 meanwhile;
//   4. the storm: the first node is restarted (SIGTERM, then started again on its port), its clients reconnect with
//      the SDK's jittered waits, and a message goes to each group as soon as it listens: the time until every socket
//      is back and has it (caught up), upgrades refused by status (only 503 is allowed of the 5xx), messages that came
//      again after an ack, and the lag p99 from when it listens until all are back;
//   5. the same count of long polls instead (on nodes restarted fresh, the sockets closed: a process may not hold
//      both), each polling again once answered: the RSS slope per held poll, then a message to each group: the
//      time until every poller has it, polls answered late (past their timeout + 2 s), answers by status.
// It ends with one `connections <mode>: ...` line per mode.
import { randomBytes } from "node:crypto";
import { existsSync } from "node:fs";
import { createServer } from "node:net";
import { join } from "node:path";
import type { ClientAgent } from "../lib/conn-client.ts";
import { ConnFleet, type FleetStats, sumCounts } from "../lib/conn-fleet.ts";
import { connectionsOptions, type ModeOptions } from "../lib/conn-options.ts";
import { addMembers, createGroup, type Registered, registerAgents, sendToGroup } from "../lib/conn-setup.ts";
import { type Quantiles } from "../lib/deliveries.ts";
import { pool } from "../lib/fleet.ts";
import { type Isolation, isolate } from "../lib/isolation.ts";
import { cpuMs, type Proc, ROOT, startScript } from "../lib/procs.ts";
import { RssReader } from "../lib/rss-reader.ts";
import { readNodeMetrics } from "../lib/sampler.ts";

const GROUP_MEMBERS = 999;
/** The big group's sends: messages a second, for how long. */
const BIG_RATE = 10;
const BIG_SECONDS = 30;
/** Member ids one create or add lists at most (schema/groups.ts). */
const PER_REQUEST = 1000;
const SETTLE_MS = 5000;
const READ_MS = 3000;
/** How long a phase may take before the scenario gives up on it (a bound, not a target). */
const PHASE_BOUND_MS = 120_000;
/** Each long poll's timeout, s. */
const POLL_TIMEOUT_S = 25;
const LISTENING = /"port":(\d+)[^\n]*"msg":"flock listening"/;

const progress = (msg: string) => process.stderr.write(`[connections] ${msg}\n`);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once("error", reject);
    s.listen(0, "127.0.0.1", () => {
      const port = (s.address() as { port: number }).port;
      s.close(() => resolve(port));
    });
  });
}

export interface ModeResult {
  mode: string;
  nodes: number;
  held: number;
  failedConnects: number;
  kbPerConnection: number;
  cpuMsPerConnection: number;
  connectsPerS: number;
  idleLagP99Ms: number;
  groupDeliveryS: number;
  stormBackS: number | null;
  stormCaughtUp: boolean;
  stormRefused: Record<string, number>;
  stormLagP99Ms: number;
  redelivered: number;
  pollsHeld: number;
  kbPerPoll: number;
  pollDeliveryS: number | null;
  latePolls: number;
  pollStatuses: Record<string, number>;
  clientCpuPct: number;
  clientRssMb: number;
  big: BigResult | null;
  line: string;
}

export interface BigResult {
  members: number;
  live: number;
  polling: number;
  deliveriesPerS: number;
  latency: Quantiles;
  missing: number;
  duplicates: number;
  sendErrors: number;
  lagP99Ms: number;
}

/** Quantiles of a histogram of whole milliseconds (ms -> count). */
function histogramQuantiles(h: Record<string, number>): Quantiles {
  const entries = Object.entries(h)
    .map(([k, v]) => [Number(k), v] as const)
    .sort((a, b) => a[0] - b[0]);
  const n = entries.reduce((a, [, c]) => a + c, 0);
  const at = (q: number) => {
    let seen = 0;
    for (const [ms, c] of entries) if ((seen += c) >= q * n) return ms;
    return entries.at(-1)?.[0] ?? 0;
  };
  return { n, p50: at(0.5), p99: at(0.99), max: entries.at(-1)?.[0] ?? 0 };
}

/** A running node of the mode, restartable on its port. */
class ModeNode {
  proc: Proc | undefined;
  constructor(
    readonly port: number,
    private readonly env: Record<string, string>,
  ) {}

  get url(): string {
    return `http://127.0.0.1:${this.port}`;
  }

  get pid(): number {
    return this.proc!.child.pid!;
  }

  get wsUrl(): string {
    return `ws://127.0.0.1:${this.port}/v1/ws`;
  }

  async start(): Promise<void> {
    this.proc = await startScript("dist/runtime/main.js", { ...this.env, PORT: String(this.port) }, LISTENING);
  }

  async stop(): Promise<void> {
    await this.proc?.stop();
  }
}

/** Polls the fleet until `done` holds: the stats then, or undefined past `boundMs`. */
async function until(
  fleet: ConnFleet,
  done: (s: FleetStats) => boolean,
  boundMs = PHASE_BOUND_MS,
): Promise<FleetStats | undefined> {
  const end = performance.now() + boundMs;
  for (;;) {
    const s = await fleet.stats();
    if (done(s)) return s;
    if (performance.now() > end) return undefined;
    await sleep(100);
  }
}

/**
 * The big group at BIG_RATE messages a second for BIG_SECONDS: its pollers start in a client process of their own,
 * the owner sends through each node in turn, and the phase ends once every receipt came (or a bound passed).
 */
async function bigGroupPhase(
  o: ModeOptions,
  nodes: ModeNode[],
  token: string,
  fleet: ConnFleet,
  owner: Registered,
  group: string,
  live: number,
  pollers: Registered[],
): Promise<BigResult> {
  const polls = ConnFleet.start(1, 2 + o.clients);
  try {
    await polls.poll([pollers.map((p, j) => ({ token: p.token, url: nodes[j % nodes.length]!.url }))], POLL_TIMEOUT_S);
    await until(polls, (s) => s.polling >= pollers.length);
    const receivers = live + pollers.length;
    const count = BIG_RATE * BIG_SECONDS;
    progress(
      `${o.mode}: the big group: ${count} messages to ${receivers} receivers (${pollers.length} polling) at ${BIG_RATE}/s`,
    );
    await Promise.all(nodes.map((n) => readNodeMetrics(n.url, token))); // resets each node's lag histogram
    const t0 = performance.now();
    let sendErrors = 0;
    const sends: Promise<void>[] = [];
    for (let n = 0; n < count; n++) {
      await sleep(Math.max(0, t0 + (n * 1000) / BIG_RATE - performance.now()));
      const url = nodes[n % nodes.length]!.url;
      sends.push(sendToGroup(url, owner, group, `big:${n}:${Date.now()}`).catch(() => void sendErrors++));
    }
    await Promise.all(sends);
    const expected = (count - sendErrors) * receivers;
    const received = async () => {
      const [a, b] = await Promise.all([fleet.stats(), polls.stats()]);
      return {
        received: a.big.received + b.big.received,
        duplicates: a.big.duplicates + b.big.duplicates,
        latency: sumCounts([a.big.latency, b.big.latency]),
      };
    };
    const end = performance.now() + PHASE_BOUND_MS;
    let got = await received();
    while (got.received - got.duplicates < expected && performance.now() < end) {
      await sleep(250);
      got = await received();
    }
    const lag = Math.max(
      ...(await Promise.all(nodes.map((n) => readNodeMetrics(n.url, token)))).map((m) => m.lagP99 * 1000),
    );
    polls.stopPolls();
    await sleep(5 * 100); // the sockets' last cumulative acks (one every 100 ms) go out before what follows
    return {
      members: live + pollers.length + 1,
      live,
      polling: pollers.length,
      deliveriesPerS: expected / BIG_SECONDS,
      latency: histogramQuantiles(got.latency),
      missing: Math.max(0, expected - (got.received - got.duplicates)),
      duplicates: got.duplicates,
      sendErrors,
      lagP99Ms: lag,
    };
  } finally {
    await polls.stop();
  }
}

async function runMode(o: ModeOptions): Promise<ModeResult> {
  let iso: Isolation | undefined;
  let fleet: ConnFleet | undefined;
  const nodes: ModeNode[] = [];
  try {
    iso = await isolate(`conn_${o.mode}`);
    const token = randomBytes(24).toString("hex");
    const env = {
      HOST: "127.0.0.1",
      LOG_LEVEL: "info",
      FLOCK_LIMITS_SCALE: "1000000",
      FLOCK_METRICS_TOKEN: token,
      ...iso.env,
    };
    progress(`${o.mode}: ${o.nodes} node(s) on ${iso.describe}; ${o.count} sockets over ${o.clients} client processes`);
    for (let i = 0; i < o.nodes; i++) nodes.push(new ModeNode(await freePort(), env));
    // the first node migrates the schema alone; the others start together
    await nodes[0]!.start();
    await Promise.all(nodes.slice(1).map((n) => n.start()));
    const urls = nodes.map((n) => n.url);

    const groups = Math.ceil(o.count / GROUP_MEMBERS);
    // the big group: its owner, a tenth of it polling (agents of their own), the rest among the sockets
    const bigPolling = Math.floor(o.big / 10);
    const bigExtra = o.big > 0 ? bigPolling + 1 : 0;
    progress(`${o.mode}: registering ${o.count + groups + bigExtra} agents`);
    const agents = await registerAgents(urls, o.count + groups + bigExtra, `conn-${o.mode}`, 64, (d) =>
      progress(`${o.mode}: ${d} registered`),
    );
    const members = agents.slice(0, o.count);
    const owners = agents.slice(o.count, o.count + groups);
    const pollersOfBig = agents.slice(o.count + groups, o.count + groups + bigPolling);
    const bigOwner = o.big > 0 ? agents.at(-1)! : undefined;
    // group g: the members i with i % groups == g, so every group has members on every client process and node
    const groupIds: string[] = new Array(groups);
    await pool(owners, 8, async (owner, g) => {
      const ids = members.filter((_, i) => i % groups === g).map((m) => m.id);
      groupIds[g] = await createGroup(urls[g % urls.length]!, owner, ids, `crowd-${g}`);
    });
    progress(`${o.mode}: ${groups} groups of up to ${GROUP_MEMBERS}`);
    // the big group's live members: spread evenly over the sockets, so over every client process and node
    const bigLive = o.big > 0 ? o.big - bigPolling - 1 : 0;
    const liveOfBig = Array.from({ length: bigLive }, (_, j) => members[Math.floor((j * o.count) / bigLive)]!);
    let bigGroup: string | undefined;
    if (bigOwner) {
      const ids = [...liveOfBig, ...pollersOfBig].map((m) => m.id);
      bigGroup = await createGroup(urls[0]!, bigOwner, ids.slice(0, PER_REQUEST), "big");
      for (let at = PER_REQUEST; at < ids.length; at += PER_REQUEST)
        await addMembers(urls[0]!, bigOwner, bigGroup, ids.slice(at, at + PER_REQUEST));
      progress(`${o.mode}: the big group: ${o.big} members (${bigLive} on sockets, ${bigPolling} polling, its owner)`);
    }

    fleet = ConnFleet.start(o.clients);
    // socket i: client process i % clients, which connects to node (its index) % nodes
    const share = (from: number, to: number): ClientAgent[][] => {
      const out: ClientAgent[][] = Array.from({ length: o.clients }, () => []);
      for (let i = from; i < to; i++) {
        const k = i % o.clients;
        out[k]!.push({ token: members[i]!.token, url: nodes[k % nodes.length]!.wsUrl });
      }
      return out;
    };
    const pids = nodes.map((n) => n.pid);
    const readers = () => pids.map((p) => new RssReader(p, 500));
    const held = async (): Promise<{ rss: number; cpu: number }> => {
      await sleep(SETTLE_MS);
      const rs = readers();
      await sleep(READ_MS);
      const rss = rs.reduce((a, r) => a + r.take(), 0);
      for (const r of rs) r.stop();
      return { rss, cpu: pids.reduce((a, p) => a + cpuMs(p), 0) };
    };

    const half = Math.floor(o.count / 2);
    const before = await held();
    progress(`${o.mode}: opening ${half} sockets (the first wave)`);
    const w1 = await fleet.open(share(0, half), o.width);
    const a1 = await held();
    progress(
      `${o.mode}: first wave ${w1.ok} open, ${w1.failed} failed in ${(w1.ms / 1000).toFixed(1)} s; the second wave`,
    );
    const w2 = await fleet.open(share(half, o.count), o.width);
    const a2 = await held();
    const added = w2.ok;
    const kbPer = (a2.rss - a1.rss) / 1024 / added;
    const cpuPer = (a2.cpu - a1.cpu) / added;
    const connectsPerS = added / (w2.ms / 1000);
    progress(
      `${o.mode}: second wave ${w2.ok} open, ${w2.failed} failed in ${(w2.ms / 1000).toFixed(1)} s; node RSS ${mb(before.rss)} -> ${mb(a1.rss)} -> ${mb(a2.rss)} MB`,
    );

    // idle: the lag over 10 s (the first scrape resets prom-client's histogram)
    await Promise.all(nodes.map((n) => readNodeMetrics(n.url, token)));
    await sleep(10_000);
    const idleLag = Math.max(
      ...(await Promise.all(nodes.map((n) => readNodeMetrics(n.url, token)))).map((m) => m.lagP99 * 1000),
    );

    // one message to each group: every socket has it
    const clientCpu0 = fleet.pids.reduce((a, p) => a + cpuMs(p), 0);
    const t0 = performance.now();
    await pool(owners, 16, (owner, g) => sendToGroup(urls[g % urls.length]!, owner, groupIds[g]!, "round-1"));
    const r1 = await until(fleet, (s) => (s.bodies["round-1"] ?? 0) >= w1.ok + w2.ok);
    const groupS = (performance.now() - t0) / 1000;
    progress(`${o.mode}: round-1 reached ${r1 ? "every socket" : "not every socket"} in ${groupS.toFixed(1)} s`);

    const big =
      bigOwner && bigGroup
        ? await bigGroupPhase(o, nodes, token, fleet, bigOwner, bigGroup, bigLive, pollersOfBig)
        : null;

    // the storm: the first node restarts on its port; its clients reconnect with the SDK's jittered waits
    const open = w1.ok + w2.ok;
    fleet.reconnect(true);
    const beforeStorm = await fleet.stats();
    const s0 = performance.now();
    progress(`${o.mode}: restarting node 1 of ${o.nodes} (SIGTERM, then started again on :${nodes[0]!.port})`);
    await nodes[0]!.stop();
    await nodes[0]!.start();
    const listening = performance.now();
    pids[0] = nodes[0]!.pid;
    await pool(owners, 16, (owner, g) => sendToGroup(urls[g % urls.length]!, owner, groupIds[g]!, "round-2"));
    const lags: number[] = [];
    const lagTimer = setInterval(() => {
      readNodeMetrics(nodes[0]!.url, token).then(
        (m) => lags.push(m.lagP99 * 1000),
        () => {},
      );
    }, 2000);
    const back = await until(fleet, (s) => s.ready >= open && (s.bodies["round-2"] ?? 0) >= open);
    const backAt = performance.now();
    await sleep(2500);
    clearInterval(lagTimer);
    const after = await fleet.stats();
    const refused: Record<string, number> = {};
    for (const [k, v] of Object.entries(after.refused)) {
      const d = v - (beforeStorm.refused[k] ?? 0);
      if (d > 0) refused[k] = d;
    }
    const stormBackS = back ? (backAt - s0) / 1000 : null;
    const clientCpuPct = ((fleet.pids.reduce((a, p) => a + cpuMs(p), 0) - clientCpu0) / (performance.now() - t0)) * 100;
    const stormLag = lags.length > 1 ? Math.max(...lags.slice(1)) : (lags[0] ?? NaN);
    const redeliveredWs = after.redelivered;
    const clientRssMb = Math.max(...after.rssMb);
    await fleet.stop();

    // long polls: the same count, on fresh node processes (the sockets closed: a process may not hold both)
    progress(`${o.mode}: long polls: restarting the node(s) fresh, then ${o.count} long polls in two waves`);
    for (const n of nodes) await n.stop();
    await nodes[0]!.start();
    await Promise.all(nodes.slice(1).map((n) => n.start()));
    nodes.forEach((n, i) => (pids[i] = n.pid));
    fleet = ConnFleet.start(o.clients);
    const pollers = (from: number, to: number): ClientAgent[][] =>
      share(from, to).map((xs, k) => xs.map((x) => ({ ...x, url: nodes[k % nodes.length]!.url })));
    const p0 = await held();
    await fleet.poll(pollers(0, half), POLL_TIMEOUT_S);
    await until(fleet, (st) => st.polling >= half);
    const p1 = await held();
    await fleet.poll(pollers(half, o.count), POLL_TIMEOUT_S);
    const full = await until(fleet, (st) => st.polling >= o.count);
    const p2 = await held();
    const kbPerPoll = (p2.rss - p1.rss) / 1024 / (o.count - half);
    progress(
      `${o.mode}: ${full?.polling ?? "not all"} polls held; node RSS ${mb(p0.rss)} -> ${mb(p1.rss)} -> ${mb(p2.rss)} MB`,
    );
    const q0 = performance.now();
    await pool(owners, 16, (owner, g) => sendToGroup(urls[g % urls.length]!, owner, groupIds[g]!, "round-3"));
    const r3 = await until(fleet, (st) => (st.bodies["round-3"] ?? 0) >= o.count);
    const pollDeliveryS = r3 ? (performance.now() - q0) / 1000 : null;
    // a full timeout more: every poll that was waiting is answered once, on time or late
    await sleep((POLL_TIMEOUT_S + 3) * 1000);
    const pollEnd = await fleet.stats();
    fleet.stopPolls();
    const pollsHeld = full?.polling ?? pollEnd.polling;

    const bad5xx = Object.entries(refused).filter(([k]) => /^5/.test(k) && k !== "503");
    const line =
      `connections ${o.mode}: ${open} held over ${o.nodes} node(s) (${w1.failed + w2.failed} failed), ` +
      `${kbPer.toFixed(1)} KB and ${cpuPer.toFixed(2)} ms CPU per added connection, ${Math.round(connectsPerS)} connects/s, ` +
      `idle lag p99 ${idleLag.toFixed(1)} ms, a message to every group on every socket in ${groupS.toFixed(1)} s; ` +
      `storm: ${stormBackS === null ? "not all back" : `all back and caught up ${stormBackS.toFixed(1)} s after the SIGTERM (${((backAt - listening) / 1000).toFixed(1)} s after it listened again)`}, ` +
      `lag p99 ${stormLag.toFixed(1)} ms, refused ${JSON.stringify(refused)}${bad5xx.length ? " (5xx other than 503!)" : ""}, ` +
      `${redeliveredWs} delivered again after an ack; clients ${Math.round(clientCpuPct)}% CPU, ${Math.round(clientRssMb)} MB RSS the largest; ` +
      `long polls: ${pollsHeld} held, ${kbPerPoll.toFixed(1)} KB per added poll, a message to every group on every poller in ` +
      `${pollDeliveryS === null ? "not all" : `${pollDeliveryS.toFixed(1)} s`}, ${pollEnd.latePolls} late, answers ${JSON.stringify(pollEnd.polls)}` +
      (big
        ? `; big group: ${big.members} members (${big.live} on sockets, ${big.polling} polling), ${BIG_RATE} msg/s for ${BIG_SECONDS} s: ` +
          `${Math.round(big.deliveriesPerS)} deliveries/s, latency p50 ${big.latency.p50} / p99 ${big.latency.p99} / max ${big.latency.max} ms, ` +
          `${big.missing} missing, ${big.duplicates} duplicates, ${big.sendErrors} sends failed, lag p99 ${big.lagP99Ms.toFixed(1)} ms`
        : "");
    return {
      mode: o.mode,
      nodes: o.nodes,
      held: open,
      failedConnects: w1.failed + w2.failed,
      kbPerConnection: kbPer,
      cpuMsPerConnection: cpuPer,
      connectsPerS,
      idleLagP99Ms: idleLag,
      groupDeliveryS: groupS,
      stormBackS,
      stormCaughtUp: back !== undefined,
      stormRefused: refused,
      stormLagP99Ms: stormLag,
      redelivered: redeliveredWs + pollEnd.redelivered,
      pollsHeld,
      kbPerPoll,
      pollDeliveryS,
      latePolls: pollEnd.latePolls,
      pollStatuses: pollEnd.polls,
      clientCpuPct,
      clientRssMb,
      big,
      line,
    };
  } finally {
    await fleet?.stop().catch(() => {});
    for (const n of nodes) await n.stop().catch(() => {});
    if (iso) for (const l of await iso.release().catch((e: Error) => [`cleanup failed: ${e.message}`])) progress(l);
  }
}

const mb = (bytes: number) => Math.round(bytes / 2 ** 20);

/** The scenario's entry (bench/run.ts hands `--scenario connections` here): 0 when every mode ran. */
export async function connectionsMain(argv: string[]): Promise<number> {
  const modes = connectionsOptions(argv);
  if (!existsSync(join(ROOT, "dist/runtime/main.js")))
    throw new Error("dist/runtime/main.js is missing: run npm run build:server first");
  const lines: string[] = [];
  for (const o of modes) {
    const r = await runMode(o);
    progress(r.line);
    lines.push(r.line);
  }
  for (const l of lines) process.stdout.write(`${l}\n`);
  return 0;
}
