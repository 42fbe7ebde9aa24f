// Held connections: 10,000 concurrent long polls, then 10,000 open WebSockets, on one node. Reports server
// memory per connection (when the bench started the server and can read its RSS) and whether every long poll
// was answered on time and every WebSocket answered a ping.
import { readFileSync } from "node:fs";
import { connect } from "node:net";
import type WebSocket from "ws";
import { pool, registerFleet } from "../lib/fleet.ts";
import { summarize } from "../lib/load.ts";
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

export function idle(serverPid: () => number | undefined): Scenario {
  return {
    name: "idle",
    description: `${COUNT} concurrent long polls and ${COUNT} open WebSockets on one node`,
    async run(ctx: ScenarioContext) {
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
        await pool(Array.from({ length: to - from }, (_, i) => from + i), 64, async (i) => {
          try {
            socks.push(await openWs(ctx.wsUrl, fleet[i % agents]!.token, () => {}));
          } catch {
            wsFailed++;
          }
        });
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
      const kb = (b: number | undefined) => (b === undefined ? "n/a" : b < 0 ? "n/a (the heap shrank between readings)" : `${Math.round(b)} B`);
      const s = summarize(latencies, pollSecs);
      return {
        ...s,
        statuses,
        errors: late + wsFailed + unanswered,
        baseline: "http",
        unit: "polls/s",
        target: "< 8 KB each, none late",
        notes:
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
function rawPoll(host: string, port: number, token: string, onWritten: () => void): Promise<{ status: string; ms: number }> {
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
      sock.write(`GET /v1/messages/pending?timeout=${TIMEOUT} HTTP/1.1\r\nHost: ${host}\r\nAuthorization: Bearer ${token}\r\n\r\n`, onWritten);
    });
    sock.on("data", (d) => {
      buf += d.toString();
      const m = /^HTTP\/1\.1 (\d{3})/.exec(buf);
      if (m && buf.includes("\r\n\r\n")) done(m[1]!);
    });
    sock.on("error", () => done("error"));
  });
}
