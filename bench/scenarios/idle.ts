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
const TIMEOUT = 10;
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
      const before = rssKb(serverPid());

      ctx.progress(`holding ${COUNT} long polls (timeout ${TIMEOUT}s)`);
      const latencies: number[] = [];
      const statuses: Record<string, number> = {};
      let late = 0;
      let peak = before;
      const started = performance.now();
      const sampler = setInterval(() => {
        const r = rssKb(serverPid());
        if (r !== undefined && (peak === undefined || r > peak)) peak = r;
      }, 250);
      const { hostname, port } = new URL(ctx.url);
      // Memory held: RSS once every poll is written and the burst has settled (well inside the time-out).
      let written = 0;
      let held: number | undefined;
      let answeredAtSample = 0;
      const allWritten = new Promise<void>((resolve) => {
        const check = setInterval(() => {
          if (written < COUNT) return;
          clearInterval(check);
          resolve();
        }, 50);
      });
      const heldSample = allWritten.then(async () => {
        await new Promise((r) => setTimeout(r, SETTLE_MS));
        held = rssKb(serverPid());
        answeredAtSample = latencies.length;
      });
      await Promise.all(
        Array.from({ length: COUNT }, (_, i) =>
          rawPoll(hostname, Number(port), fleet[i % agents]!.token, () => written++).then((r) => {
            statuses[r.status] = (statuses[r.status] ?? 0) + 1;
            latencies.push(r.ms);
            if (r.ms > (TIMEOUT + 2) * 1000) late++;
          }),
        ),
      );
      clearInterval(sampler);
      await heldSample;
      const pollPeak = peak;
      const pollSecs = (performance.now() - started) / 1000;

      ctx.progress(`holding ${COUNT} WebSockets`);
      const socks: WebSocket[] = [];
      const wsBefore = rssKb(serverPid());
      let wsFailed = 0;
      await pool(Array.from({ length: COUNT }, (_, i) => i), 64, async (i) => {
        try {
          socks.push(await openWs(ctx.wsUrl, fleet[i % agents]!.token, () => {}));
        } catch {
          wsFailed++;
        }
      });
      const wsHeld = rssKb(serverPid());
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

      const perPoll = before !== undefined && held !== undefined ? ((held - before) * 1024) / COUNT : undefined;
      const perPollPeak = before !== undefined && pollPeak !== undefined ? ((pollPeak - before) * 1024) / COUNT : undefined;
      const perWs = wsBefore !== undefined && wsHeld !== undefined ? ((wsHeld - wsBefore) * 1024) / COUNT : undefined;
      const s = summarize(latencies, pollSecs);
      return {
        ...s,
        statuses,
        errors: late + wsFailed + unanswered,
        baseline: "http",
        unit: "polls/s",
        target: "< 8 KB each, none late",
        notes:
          `long polls: ${late} late (> ${TIMEOUT + 2}s), ${perPoll === undefined ? "memory n/a" : `${Math.round(perPoll)} B each held`} (${COUNT - answeredAtSample} held when read)` +
          `${perPollPeak === undefined ? "" : ` (${Math.round(perPollPeak)} B each at the RSS peak, garbage of the burst included)`}; ` +
          `websockets: ${socks.length} open, ${wsFailed} failed, ${pongs} pongs, ${unanswered} unanswered, ` +
          `${perWs === undefined ? "memory n/a" : `${Math.round(perWs)} B each`}`,
      };
    },
  };
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
