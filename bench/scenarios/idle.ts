// Held connections: 10,000 concurrent long polls, then 10,000 open WebSockets, on one node. Reports server
// memory per connection (when the bench started the server and can read its RSS) and whether every long poll
// was answered on time and every WebSocket answered a ping.
// First, the memory of a node doing nothing (issue 30): nodes of its own, started as `npm start` starts one, embedded
// (a new DATA_DIR, then again on it) and on DATABASE_URL / REDIS_URL when the bench has both, each watched alone.
import { spawn } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { connect } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type WebSocket from "ws";
import { pool, registerFleet } from "../lib/fleet.ts";
import { summarize } from "../lib/load.ts";
import { ROOT } from "../lib/procs.ts";
import type { Scenario, ScenarioContext } from "../lib/scenario.ts";
import { openWs } from "./realtime.ts";

const COUNT = Number(process.env["BENCH_IDLE"] ?? 10_000);
const TIMEOUT = 20;
/** How long after the last poll is written the held memory is read. */
const SETTLE_MS = 3000;

export function rssKb(pid: number | undefined): number | undefined {
  if (!pid) return undefined;
  try {
    const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, "utf8"));
    return m ? Number(m[1]) : undefined;
  } catch {
    return undefined;
  }
}

/** Seconds an idle node is watched after it listens (its RSS read each second): V8 shrinks the heap start-up grew within ~15-40 s. */
const IDLE_SECS = Number(process.env["BENCH_IDLE_SECS"] ?? 40);

/** What `npm start` runs (plain node on the compiled JavaScript) when it is built, else the sources through tsx; BENCH_IDLE_ENTRY=tsx for the latter. */
function startCommand(): { args: string[]; label: string } {
  if (process.env["BENCH_IDLE_ENTRY"] !== "tsx" && existsSync(join(ROOT, "dist/runtime/main.js"))) {
    return { args: ["dist/runtime/main.js"], label: "node dist/runtime/main.js" };
  }
  return { args: ["--import", "tsx", "runtime/main.ts"], label: "node --import tsx runtime/main.ts" };
}

export interface IdleRss {
  /** the highest reading, MB */
  peak: number;
  /** the last reading, IDLE_SECS after the node listened, MB */
  settled: number;
}

/** Starts a node with `env` over the bench's own, watches its RSS for IDLE_SECS with no request sent, and stops it. */
export async function idleRss(env: Record<string, string | undefined>): Promise<IdleRss> {
  const child = spawn(process.execPath, startCommand().args, {
    cwd: ROOT,
    env: { ...process.env, PORT: "0", HOST: "127.0.0.1", LOG_LEVEL: "info", ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  const exited = new Promise<void>((r) => child.once("exit", () => r()));
  try {
    let out = "";
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`the idle node did not start in 60 s:\n${out}`)), 60_000);
      const seen = (d: Buffer) => {
        out += d.toString();
        if (!/"msg":"flock listening"/.test(out)) return;
        clearTimeout(timer);
        resolve();
      };
      child.stdout.on("data", seen);
      child.stderr.on("data", (d: Buffer) => (out += d.toString()));
      child.once("exit", (code) => {
        clearTimeout(timer);
        reject(new Error(`the idle node exited with ${code}:\n${out}`));
      });
    });
    let peak = 0;
    let last = 0;
    for (let i = 0; i < IDLE_SECS; i++) {
      await new Promise((r) => setTimeout(r, 1000));
      last = (rssKb(child.pid) ?? 0) / 1024;
      peak = Math.max(peak, last);
    }
    return { peak: Math.round(peak), settled: Math.round(last) };
  } finally {
    if (child.exitCode === null) child.kill("SIGTERM");
    const t = setTimeout(() => child.kill("SIGKILL"), 15_000);
    await exited;
    clearTimeout(t);
  }
}

/** Idle RSS of an embedded node (first start on a new DATA_DIR, then a restart on it) and of one on Redis and Postgres. */
async function idleNodes(ctx: ScenarioContext): Promise<{ memory: Record<string, IdleRss | string>; note: string }> {
  const memory: Record<string, IdleRss | string> = {};
  const dir = mkdtempSync(join(tmpdir(), "flock-idle-"));
  const embedded = { DATABASE_URL: undefined, REDIS_URL: undefined, DATA_DIR: dir };
  try {
    ctx.progress(`idle RSS: an embedded node's first start, ${IDLE_SECS} s`);
    memory["embedded_first_start"] = await idleRss(embedded);
    ctx.progress(`idle RSS: the embedded node again on its DATA_DIR, ${IDLE_SECS} s`);
    memory["embedded_restart"] = await idleRss(embedded);
  } catch (err) {
    const failed = `failed: ${(err as Error).message.split("\n")[0]}`;
    memory["embedded_first_start"] ??= failed;
    memory["embedded_restart"] ??= failed;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  if (process.env["DATABASE_URL"] && process.env["REDIS_URL"]) {
    ctx.progress(`idle RSS: a node on DATABASE_URL and REDIS_URL, ${IDLE_SECS} s`);
    memory["redis_postgres"] = await idleRss({}).catch((err: Error) => `failed: ${err.message.split("\n")[0]}`);
  } else {
    memory["redis_postgres"] = "not measured (the bench has no DATABASE_URL and REDIS_URL)";
  }
  const fmt = (m: IdleRss | string | undefined) =>
    m === undefined ? "n/a" : typeof m === "string" ? m : `${m.settled} MB (peak ${m.peak})`;
  const note =
    `idle RSS ${IDLE_SECS} s after listening (${startCommand().label}): embedded first start ${fmt(memory["embedded_first_start"])}, ` +
    `embedded restart ${fmt(memory["embedded_restart"])}, Redis+Postgres ${fmt(memory["redis_postgres"])}; `;
  return { memory, note };
}

export function idle(serverPid: () => number | undefined): Scenario {
  return {
    name: "idle",
    description: `idle RSS of fresh nodes, then ${COUNT} concurrent long polls and ${COUNT} open WebSockets on one node`,
    async run(ctx: ScenarioContext) {
      const idleMemory = process.env["BENCH_IDLE_SECS"] === "0" ? undefined : await idleNodes(ctx);
      const agents = Math.max(10, Math.min(ctx.agents, 200));
      ctx.progress(`registering ${agents} agents`);
      const fleet = await registerFleet(ctx.url, agents, "idle");
      // Each phase on a fresh node: the heap of earlier load (or of the other phase) would blur the figure.
      await ctx.freshNode?.();
      await warm(ctx.url, fleet[0]!.token);
      const before = rssKb(serverPid());

      ctx.progress(`holding ${COUNT} long polls (timeout ${TIMEOUT}s), in two waves`);
      const latencies: number[] = [];
      const statuses: Record<string, number> = {};
      let late = 0;
      const started = performance.now();
      const { hostname, port } = new URL(ctx.url);
      const half = Math.floor(COUNT / 2);
      // Two waves of polls; RSS is read once each wave is written and settled (well inside the time-out).
      // The second reading over the first is the memory each added poll costs, free of the heap's one-time
      // growth under the first burst; the second over the start is the whole cost, growth included.
      const polls: Promise<void>[] = [];
      const wave = async (from: number, to: number) => {
        let written = 0;
        for (let i = from; i < to; i++) {
          polls.push(
            rawPoll(hostname, Number(port), fleet[i % agents]!.token, () => written++).then((r) => {
              statuses[r.status] = (statuses[r.status] ?? 0) + 1;
              latencies.push(r.ms);
              if (r.ms > (TIMEOUT + 2) * 1000) late++;
            }),
          );
        }
        while (written < to - from) await new Promise((r) => setTimeout(r, 50));
        await new Promise((r) => setTimeout(r, SETTLE_MS));
        return rssKb(serverPid());
      };
      const held1 = await wave(0, half);
      const held2 = await wave(half, COUNT);
      const answeredAtSample = latencies.length;
      await Promise.all(polls);
      const pollSecs = (performance.now() - started) / 1000;

      ctx.progress(`holding ${COUNT} WebSockets, in two waves`);
      const socks: WebSocket[] = [];
      await ctx.freshNode?.();
      await warm(ctx.url, fleet[0]!.token);
      const wsBefore = rssKb(serverPid());
      let wsFailed = 0;
      const open = async (from: number, to: number) => {
        await pool(
          Array.from({ length: to - from }, (_, i) => from + i),
          64,
          async (i) => {
            try {
              socks.push(await openWs(ctx.wsUrl, fleet[i % agents]!.token, () => {}));
            } catch {
              wsFailed++;
            }
          },
        );
        await new Promise((r) => setTimeout(r, SETTLE_MS));
        return rssKb(serverPid());
      };
      const ws1 = await open(0, half);
      const ws2 = await open(half, COUNT);
      ctx.progress("pinging every WebSocket");
      let pongs = 0;
      let unanswered = 0;
      await Promise.all(
        socks.map(
          (s) =>
            new Promise<void>((resolve) => {
              const t = setTimeout(() => {
                unanswered++;
                resolve();
              }, 5000);
              s.on("message", (d) => {
                if (d.toString().includes('"pong"')) {
                  clearTimeout(t);
                  pongs++;
                  resolve();
                }
              });
              s.send(JSON.stringify({ type: "ping" }));
            }),
        ),
      );
      for (const s of socks) s.terminate();

      const per = (hi: number | undefined, lo: number | undefined, n: number) =>
        hi === undefined || lo === undefined ? undefined : ((hi - lo) * 1024) / n;
      const perPoll = per(held2, held1, COUNT - half);
      const perPollAll = per(held2, before, COUNT);
      const perWs = per(ws2, ws1, COUNT - half);
      const perWsAll = per(ws2, wsBefore, COUNT);
      // A collection between the two readings can shrink the heap below the first: then only the whole cost says anything.
      const kb = (b: number | undefined) =>
        b === undefined ? "n/a" : b < 0 ? "n/a (the heap shrank between readings)" : `${Math.round(b)} B`;
      const s = summarize(latencies, pollSecs);
      return {
        ...s,
        statuses,
        errors: late + wsFailed + unanswered,
        baseline: "http",
        unit: "polls/s",
        target: "< 8 KB each, none late; idle RSS <= 250 MB embedded, <= 120 MB on Redis+Postgres",
        ...(idleMemory ? { memory: idleMemory.memory } : {}),
        notes:
          (idleMemory?.note ?? "") +
          `long polls: ${late} late (> ${TIMEOUT + 2}s), ${COUNT - answeredAtSample} held at the last reading; ` +
          `memory ${kb(perPoll)} per added poll (${kb(perPollAll)} each including the heap's growth); ` +
          `websockets: ${socks.length} open, ${wsFailed} failed, ${pongs} pongs, ${unanswered} unanswered; ` +
          `memory ${kb(perWs)} per added socket (${kb(perWsAll)} each including growth)`,
      };
    },
  };
}

/** A few requests through the paths the phase uses, so code loading and compilation are not counted as held memory. */
async function warm(url: string, token: string): Promise<void> {
  for (let i = 0; i < 20; i++) {
    const r = await fetch(`${url}/v1/messages/pending?timeout=0`, { headers: { authorization: `Bearer ${token}` } });
    await r.arrayBuffer();
  }
}

/**
 * One long poll on its own raw socket, timed from the moment the request is written (so the time the load
 * generator takes to open 10,000 sockets does not count against the server).
 */
function rawPoll(
  host: string,
  port: number,
  token: string,
  onWritten: () => void,
): Promise<{ status: string; ms: number }> {
  return new Promise((resolve) => {
    const sock = connect(port, host);
    let t0 = 0;
    let buf = "";
    const done = (status: string) => {
      sock.destroy();
      resolve({ status, ms: t0 ? performance.now() - t0 : 0 });
    };
    sock.setTimeout((TIMEOUT + 30) * 1000, () => done("timeout"));
    sock.on("connect", () => {
      t0 = performance.now();
      sock.write(
        `GET /v1/messages/pending?timeout=${TIMEOUT} HTTP/1.1\r\nHost: ${host}\r\nAuthorization: Bearer ${token}\r\n\r\n`,
        onWritten,
      );
    });
    sock.on("data", (d) => {
      buf += d.toString();
      const m = /^HTTP\/1\.1 (\d{3})/.exec(buf);
      if (m && buf.includes("\r\n\r\n")) done(m[1]!);
    });
    sock.on("error", () => done("error"));
  });
}
