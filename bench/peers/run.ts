// `npm run bench:peers -- [--servers uws,soketi,socketio,flock] [--members 999] [--procs 3] [--rates 5,10,25,...]
//   [--step 5] [--ack batch|each|none] [--ack-ms 50] [--ack-messages 32] [--all] [--flock-root DIR] [--out FILE]`
// Group fan-out, made fair: the same members (999 by default) spread over several receiver processes that parse every
// frame, the same ~200-byte payload, through bare uWS publish, Soketi, Socket.IO with its Redis adapter and Flock, in
// one run. Each server gets fixed rates in turn, up the list, until one no longer delivers every message to every
// member within 1 s with p99 < 200 ms; the last rate that did is its max sustained. Also reported: memory per idle
// connection (server RSS before and after the members connect), and per step the CPU of the server, the receivers,
// Redis and Postgres (bench/lib/backend-cpu.ts), also as µs per delivery, and what the step costs other clients of
// the same Redis: the round trips of a PING every 5 ms meanwhile (bench/lib/redis-probe.ts). `--all` runs every
// rate listed even past a failing one (to compare the CPU a delivery costs at one rate over several steps:
// `--rates 10,10,10 --all`).
import { type ChildProcess, spawn } from "node:child_process";
import { readFileSync, writeFileSync } from "node:fs";
import { cpus } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { backendCpu, cpuBetween } from "../lib/backend-cpu.ts";
import { cpuMs, ROOT } from "../lib/procs.ts";
import { redisProbe } from "../lib/redis-probe.ts";
import { isClusterUrl } from "../../runtime/engines/redis/target.ts";
import { atRate } from "../lib/rate.ts";
import { ACK_BATCH_DEFAULTS } from "../../client/ack-batch.ts";
import { ensurePeers } from "./install.ts";
import {
  type AckMode,
  type Command,
  HIST_BUCKETS,
  HIST_RES_MS,
  type Reply,
  type Report,
  type Target,
} from "./protocol.ts";
import { type ServerName, startServer } from "./servers.ts";

const { values: a } = parseArgs({
  options: {
    servers: { type: "string", default: "uws,soketi,socketio,flock" },
    members: { type: "string", default: "999" },
    procs: { type: "string", default: "3" },
    rates: { type: "string", default: "5,10,15,20,25,35,50,70,100,140,200,280,400,560,800,1100,1600" },
    step: { type: "string", default: "5" },
    ack: { type: "string", default: "batch" },
    // a batch's bounds (--ack batch): the SDK's defaults (client/ack-batch.ts)
    "ack-ms": { type: "string", default: String(ACK_BATCH_DEFAULTS.ms) },
    "ack-messages": { type: "string", default: String(ACK_BATCH_DEFAULTS.messages) },
    all: { type: "boolean", default: false },
    "flock-root": { type: "string", default: ROOT },
    out: { type: "string", default: "bench/peers-results.json" },
  },
});
const MEMBERS = Number(a.members);
const PROCS = Number(a.procs);
const RATES = a.rates!.split(",").map(Number);
const STEP_S = Number(a.step);
const ACK = a.ack as AckMode;
const ACK_MS = Number(a["ack-ms"]);
const ACK_MESSAGES = Number(a["ack-messages"]);
const PAD = "x".repeat(160);
const progress = (msg: string) => process.stderr.write(`[peers] ${msg}\n`);

/** Resident memory of a process, in bytes (Linux). */
function rss(pid: number): number {
  const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, "utf8"));
  return m ? Number(m[1]) * 1024 : 0;
}

class Receivers {
  private readonly waiting = new Map<ChildProcess, (r: Reply) => void>();
  constructor(readonly children: ChildProcess[]) {
    for (const c of children) c.on("message", (r: Reply) => this.waiting.get(c)?.(r));
  }

  static start(n: number): Receivers {
    return new Receivers(
      Array.from({ length: n }, () =>
        spawn(process.execPath, ["--import", "tsx", join(ROOT, "bench/peers/receiver.ts")], {
          cwd: ROOT,
          stdio: ["ignore", "inherit", "inherit", "ipc"],
        }),
      ),
    );
  }

  private ask(c: ChildProcess, cmd: Command): Promise<Reply> {
    return new Promise((resolve) => {
      this.waiting.set(c, resolve);
      c.send(cmd);
    });
  }

  async connect(targets: Target[]): Promise<void> {
    const shares = this.children.map((_, i) => targets.filter((_, k) => k % this.children.length === i));
    const replies = await Promise.all(
      this.children.map((c, i) =>
        this.ask(c, { type: "connect", targets: shares[i]!, ack: ACK, ackMs: ACK_MS, ackMessages: ACK_MESSAGES }),
      ),
    );
    const failed = replies.find((r) => r.type === "failed");
    if (failed) throw new Error(`receivers could not connect: ${(failed as { error: string }).error}`);
  }

  async report(): Promise<Report[]> {
    return (await Promise.all(this.children.map((c) => this.ask(c, { type: "report" })))) as Report[];
  }

  close(): void {
    for (const c of this.children) if (c.connected) c.send({ type: "close" } satisfies Command);
  }
}

interface Step {
  rate: number;
  published: number;
  errors: number;
  complete: number;
  deliveries: number;
  p50: number;
  p99: number;
  max: number;
  serverCpu: number;
  receiverCpu: number[];
  /** Redis's and Postgres's CPU over the step, % of one core (absent where not measurable). */
  redisCpu?: number;
  postgresCpu?: number;
  /** Round trips of a PING every 5 ms on the same Redis during the step, ms (when the server uses Redis). */
  redisPing?: { n: number; p50: number; p99: number; p999: number; max: number };
  /** CPU per delivery over the step, µs: the server, the receivers together, Redis, Postgres. */
  usPerDelivery: { server: number; receivers: number; redis?: number; postgres?: number };
  pass: boolean;
}

function merge(reports: Report[]) {
  const hist = new Float64Array(HIST_BUCKETS);
  const within = new Map<number, number>();
  let frames = 0;
  for (const r of reports) {
    for (const [b, n] of r.hist) hist[b]! += n;
    for (const [s, n] of r.within) within.set(s, (within.get(s) ?? 0) + n);
    frames += r.frames;
  }
  const q = (p: number) => {
    let seen = 0;
    for (let b = 0; b < HIST_BUCKETS; b++) {
      seen += hist[b]!;
      if (seen >= p * frames) return (b + 1) * HIST_RES_MS;
    }
    return 0;
  };
  let max = 0;
  for (let b = HIST_BUCKETS - 1; b >= 0; b--)
    if (hist[b]) {
      max = (b + 1) * HIST_RES_MS;
      break;
    }
  return { within, frames, p50: frames ? q(0.5) : 0, p99: frames ? q(0.99) : 0, max };
}

async function measure(name: ServerName, env: Record<string, string>) {
  progress(`${name}: starting`);
  const server = await startServer(name, { flockRoot: a["flock-root"]!, env });
  const receivers = Receivers.start(PROCS);
  // Redis's CPU and the PING probe only for the servers that use the Redis of REDIS_URL, Postgres's for Flock
  const redisUrl =
    (name === "flock" || name === "socketio") && env["REDIS_URL"] && !isClusterUrl(env["REDIS_URL"])
      ? env["REDIS_URL"]
      : undefined;
  const backends = backendCpu({ redisUrl, databaseUrl: name === "flock" ? env["DATABASE_URL"] : undefined });
  const probe = redisUrl ? redisProbe(redisUrl) : undefined;
  try {
    const targets = await server.targets(MEMBERS);
    await new Promise((r) => setTimeout(r, 1000));
    const before = rss(server.pid);
    progress(`${server.name}: connecting ${MEMBERS} members from ${PROCS} processes`);
    await receivers.connect(targets);
    await new Promise((r) => setTimeout(r, 2000));
    const perIdle = (rss(server.pid) - before) / MEMBERS;
    let seq = 0;
    const publishAt = async (rate: number, seconds: number) => {
      let errors = 0;
      const published: number[] = [];
      const r = await atRate(rate, seconds, 64, async () => {
        const s = seq++;
        published.push(s);
        const payload = JSON.stringify({ seq: s, t: performance.timeOrigin + performance.now(), pad: PAD });
        await server.publish(payload).catch((e: Error) => {
          errors++;
          if (errors === 1) progress(`${server.name}: ${e.message}`);
        });
      });
      return { published, errors: errors + r.dropped };
    };
    progress(`${server.name}: warming up at ${RATES[0]}/s`);
    await publishAt(RATES[0]!, 2);
    await new Promise((r) => setTimeout(r, 1500));
    await receivers.report();
    const steps: Step[] = [];
    for (const rate of RATES) {
      const cpu0 = cpuMs(server.pid);
      const b0 = await backends.sample();
      probe?.start();
      const t0 = performance.now();
      const { published, errors } = await publishAt(rate, STEP_S);
      await new Promise((r) => setTimeout(r, 1200));
      const reports = await receivers.report();
      const wallMs = performance.now() - t0; // longer than the step when publishes lag
      const serverMs = cpuMs(server.pid) - cpu0;
      const redisPing = await probe?.stop();
      const serverCpu = (serverMs / wallMs) * 100; // % of one core
      const b1 = await backends.sample();
      const { redisMs, postgresMs } = cpuBetween(b0, b1);
      const m = merge(reports);
      const us = (ms: number) => Math.round((ms * 1000) / Math.max(1, m.frames));
      const complete = published.filter((s) => m.within.get(s) === MEMBERS).length;
      const pass = errors === 0 && complete === published.length && m.p99 < 200;
      const step: Step = {
        rate,
        published: published.length,
        errors,
        complete,
        deliveries: m.frames,
        p50: m.p50,
        p99: m.p99,
        max: m.max,
        serverCpu: Math.round(serverCpu),
        receiverCpu: reports.map((r) => Math.round((r.cpuMs / wallMs) * 100)),
        ...(redisMs !== undefined ? { redisCpu: Math.round((redisMs / wallMs) * 100) } : {}),
        ...(postgresMs !== undefined ? { postgresCpu: Math.round((postgresMs / wallMs) * 100) } : {}),
        ...(redisPing ? { redisPing } : {}),
        usPerDelivery: {
          server: us(serverMs),
          receivers: us(reports.reduce((sum, r) => sum + r.cpuMs, 0)),
          ...(redisMs !== undefined ? { redis: us(redisMs) } : {}),
          ...(postgresMs !== undefined ? { postgres: us(postgresMs) } : {}),
        },
        pass,
      };
      steps.push(step);
      progress(
        `${server.name}: ${rate} msg/s (${rate * MEMBERS} deliveries/s): ${complete}/${published.length} complete within 1 s, p50 ${step.p50.toFixed(1)} p99 ${step.p99.toFixed(1)} ms, server CPU ${step.serverCpu}%, receivers ${step.receiverCpu.join("/")}%${step.redisCpu !== undefined ? `, Redis ${step.redisCpu}%` : ""}${step.postgresCpu !== undefined ? `, Postgres ${step.postgresCpu}%` : ""}; µs of CPU per delivery: ${Object.entries(
          step.usPerDelivery,
        )
          .map(([k, v]) => `${k} ${v}`)
          .join(
            ", ",
          )}${redisPing ? `; Redis PING p99 ${redisPing.p99} p999 ${redisPing.p999} max ${redisPing.max} ms` : ""}${pass ? "" : " - FAILS"}`,
      );
      if (!pass && !a.all) break;
    }
    const firstFail = steps.findIndex((s) => !s.pass);
    const passed = firstFail < 0 ? steps : steps.slice(0, firstFail); // with --all, steps past a failure do not count
    const best = passed.length ? passed[passed.length - 1]!.rate * MEMBERS : 0;
    const at25 = steps.find((s) => s.rate === 25);
    return {
      server: server.name,
      maxDeliveries: best,
      p99At25: at25?.p99 ?? null,
      bytesPerIdle: Math.round(perIdle),
      steps,
    };
  } finally {
    receivers.close();
    probe?.close();
    await backends.close();
    await server.stop();
  }
}

async function main() {
  const names = a.servers!.split(",") as ServerName[];
  if (names.some((n) => n === "soketi" || n === "socketio")) ensurePeers(progress);
  const env: Record<string, string> = {};
  for (const k of ["DATABASE_URL", "REDIS_URL", "PG_SCHEMA", "REDIS_PREFIX"])
    if (process.env[k]) env[k] = process.env[k]!;
  const results = [];
  for (const n of names) results.push(await measure(n, env));
  const uws = results.find((r) => r.server === "bare uWS publish")?.maxDeliveries;
  const rows = results.map((r) => ({ ...r, ratio: uws ? r.maxDeliveries / uws : null }));
  const report = {
    date: new Date().toISOString(),
    machine: `${cpus().length} x ${cpus()[0]?.model ?? "cpu"}, node ${process.version}`,
    options: {
      members: MEMBERS,
      procs: PROCS,
      rates: RATES,
      stepSeconds: STEP_S,
      flockAck: ACK,
      ...(ACK === "batch" ? { ackMs: ACK_MS, ackMessages: ACK_MESSAGES } : {}),
      flockRoot: a["flock-root"],
      redis: env["REDIS_URL"] ? "Redis" : "memory engines",
      db: env["DATABASE_URL"] ? "Postgres" : "embedded PGlite",
    },
    results: rows,
  };
  writeFileSync(a.out!, `${JSON.stringify(report, null, 2)}\n`);
  const lines = [
    ["server", "max sustained deliveries/s", "ratio to bare uWS", "p99 at 25 msg/s", "per idle connection"],
  ];
  for (const r of rows) {
    lines.push([
      r.server,
      String(r.maxDeliveries),
      r.ratio === null ? "-" : r.ratio.toFixed(2),
      r.p99At25 === null ? "-" : `${r.p99At25.toFixed(1)} ms`,
      `${(r.bytesPerIdle / 1024).toFixed(1)} KB`,
    ]);
  }
  const w = lines[0]!.map((_, i) => Math.max(...lines.map((l) => l[i]!.length)));
  process.stdout.write(`${lines.map((l) => l.map((c, i) => c.padEnd(w[i]!)).join("  ")).join("\n")}\n`);
  progress(`wrote ${a.out}`);
}

main().then(
  () => process.exit(0),
  (err: Error) => {
    progress(err.stack ?? String(err));
    process.exit(1);
  },
);
