// A client process of the connections scenario (bench/scenarios/connections.ts): it holds the WebSockets (or the long
// polls) of its share of the agents, from a loopback source address of its own (so no one address runs out of
// ephemeral ports), and answers the scenario over IPC. One process holds at most what its open-file limit allows
// (20,000 here).
//
// Each socket authenticates with its agent's token, acknowledges every message it gets (one ack frame each), and
// notes which message bodies reached it. Once told to, a socket that closes reconnects after the SDK's own jittered
// wait (reconnectDelayMs in client/retry.ts: 250 ms doubling per failure in a row, spread from half to one and a half
// times), as the SDK's message stream does. A message that comes again after this socket acknowledged it is counted.
// A long poller polls again as soon as its poll is answered (GET /v1/messages/pending), acknowledging what came.
// The big group's messages (bodies `big:<n>:<Date.now() at the send>`) are acknowledged as the SDK does a group's: one
// cumulative ack (`through`) for what came, every BIG_ACK_MS on a socket and once per answer on a poll; each one's
// latency from the send is counted in 1 ms buckets, and one that comes to the same receiver twice is counted.
import { Agent, request } from "node:http";
import WebSocket from "ws";
import { reconnectDelayMs } from "../../client/retry.ts";

export interface ClientAgent {
  token: string;
  /** ws:// URL of the node this agent connects to */
  url: string;
}

export type ClientCommand =
  | { type: "open"; agents: ClientAgent[]; width: number; localAddress: string }
  | { type: "reconnect"; on: boolean }
  /** hold one long poll per agent (`url` is the node's http:// base), `timeoutS` each, polling again when answered */
  | { type: "poll"; agents: ClientAgent[]; timeoutS: number; localAddress: string }
  | { type: "stop-polls" }
  | { type: "stats" }
  | { type: "exit" };

export interface ClientStats {
  type: "stats";
  sockets: number;
  ready: number;
  /** upgrades answered with an HTTP status instead of 101, by status; connections that failed without one: "error" */
  refused: Record<string, number>;
  /** sockets that got each message body at least once */
  bodies: Record<string, number>;
  /** messages that came again after this socket had acknowledged them */
  redelivered: number;
  reconnects: number;
  /** long polls waiting on the server now; polls answered, by status; answered later than their timeout + 2 s */
  polling: number;
  polls: Record<string, number>;
  latePolls: number;
  /** Date.now() of the last socket that became ready */
  lastReadyAt: number;
  /** the big group's messages: receipts, receipts of one this receiver had (a duplicate), latency ms -> count */
  big: BigStats;
  cpuMs: number;
  rssMb: number;
}

export interface BigStats {
  received: number;
  duplicates: number;
  latency: Record<string, number>;
}

export interface ClientOpened {
  type: "opened";
  ok: number;
  failed: number;
  ms: number;
}

interface Sock {
  agent: ClientAgent;
  ws: WebSocket | undefined;
  ready: boolean;
  /** failed connections in a row */
  failures: number;
  acked: Set<string>;
  bodies: Set<string>;
  /** the big group's message numbers this socket got (a bit each), and the id to ack cumulatively next (if any) */
  bigSeen: Uint8Array;
  bigAck: string | undefined;
}

const socks: Sock[] = [];
const refused: Record<string, number> = {};
const bodies = new Map<string, number>();
let redelivered = 0;
let reconnects = 0;
let lastReadyAt = 0;
let reconnecting = false;
let localAddress = "127.0.0.1";

const send = (m: ClientStats | ClientOpened | { type: "error"; message: string }) => process.send?.(m);

const big: BigStats = { received: 0, duplicates: 0, latency: {} };
/** How often a socket sends its cumulative ack of the big group's messages. */
const BIG_ACK_MS = 100;
const bigAcks = new Set<Sock>();
/** A receiver's bits before its first big-group message (shared, never written: noteBig grows a copy). */
const NO_BITS = new Uint8Array(0);

/**
 * A big-group body, if it is one: its latency counted, and a receipt the receiver already had counted as a duplicate
 * (`seen`: a bit per message number; sends in flight together may commit, and so arrive, in either order). Returns the
 * receiver's bits (grown to hold the number), or undefined for another body.
 */
function noteBig(body: string, seen: Uint8Array): Uint8Array | undefined {
  if (!body.startsWith("big:")) return undefined;
  const [, n, at] = body.split(":");
  const num = Number(n);
  let bits = seen;
  if (num >> 3 >= bits.length) {
    bits = new Uint8Array(Math.max(2 * bits.length, (num >> 3) + 1));
    bits.set(seen);
  }
  big.received++;
  if (bits[num >> 3]! & (1 << (num & 7))) big.duplicates++;
  bits[num >> 3]! |= 1 << (num & 7);
  const ms = String(Math.max(0, Date.now() - Number(at)));
  big.latency[ms] = (big.latency[ms] ?? 0) + 1;
  return bits;
}

setInterval(() => {
  for (const s of bigAcks) {
    if (s.bigAck && s.ws?.readyState === WebSocket.OPEN)
      s.ws.send(JSON.stringify({ type: "ack", id: s.bigAck, through: true }));
    s.bigAck = undefined;
  }
  bigAcks.clear();
}, BIG_ACK_MS).unref();

/** Opens `s`'s socket; resolves true once its ready frame came, false when the connection failed or closed first. */
function connect(s: Sock): Promise<boolean> {
  return new Promise((resolve) => {
    let settled = false;
    const done = (ok: boolean) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      resolve(ok);
    };
    // lean message frames, as the SDK asks for them
    const ws = new WebSocket(s.agent.url, ["flock.json.lean", "flock.json"], {
      headers: { authorization: `Bearer ${s.agent.token}` },
      localAddress,
      perMessageDeflate: false,
    });
    s.ws = ws;
    const timer = setTimeout(() => {
      refused["timeout"] = (refused["timeout"] ?? 0) + 1;
      ws.terminate();
      done(false);
    }, 30_000);
    ws.on("unexpected-response", (_req, res) => {
      refused[String(res.statusCode)] = (refused[String(res.statusCode)] ?? 0) + 1;
      res.resume();
      ws.terminate();
      done(false);
    });
    ws.on("error", (err: NodeJS.ErrnoException) => {
      if (!settled) refused[err.code ?? "error"] = (refused[err.code ?? "error"] ?? 0) + 1;
      done(false);
    });
    ws.on("message", (data) => {
      const f = JSON.parse(data.toString()) as { type: string; message?: { id: string; body: string } };
      if (f.type === "ready") {
        s.ready = true;
        s.failures = 0;
        lastReadyAt = Date.now();
        done(true);
      } else if (f.type === "message" && f.message) {
        const m = f.message;
        const seen = noteBig(m.body, s.bigSeen);
        if (seen !== undefined) {
          s.bigSeen = seen;
          s.bigAck = m.id;
          bigAcks.add(s);
          return;
        }
        if (s.acked.has(m.id)) redelivered++;
        else {
          s.acked.add(m.id);
          if (!s.bodies.has(m.body)) {
            s.bodies.add(m.body);
            bodies.set(m.body, (bodies.get(m.body) ?? 0) + 1);
          }
        }
        ws.send(JSON.stringify({ type: "ack", id: m.id }));
      }
    });
    ws.on("close", () => {
      const was = s.ready;
      s.ready = false;
      done(false);
      if (ws !== s.ws || !reconnecting) return;
      if (!was) s.failures++;
      reconnects++;
      setTimeout(() => void connect(s), reconnectDelayMs(s.failures, Math.random));
    });
  });
}

async function open(agents: ClientAgent[], width: number): Promise<ClientOpened> {
  const started = performance.now();
  const mine = agents.map((agent): Sock => ({
    agent,
    ws: undefined,
    ready: false,
    failures: 0,
    acked: new Set(),
    bodies: new Set(),
    bigSeen: NO_BITS,
    bigAck: undefined,
  }));
  socks.push(...mine);
  let next = 0;
  let ok = 0;
  await Promise.all(
    Array.from({ length: Math.min(width, mine.length) }, async () => {
      while (next < mine.length) {
        const s = mine[next++]!;
        if (await connect(s)) ok++;
      }
    }),
  );
  return { type: "opened", ok, failed: mine.length - ok, ms: performance.now() - started };
}

interface Poller {
  agent: ClientAgent;
  waiting: boolean;
  acked: Set<string>;
  bodies: Set<string>;
  bigSeen: Uint8Array;
}

const pollers: Poller[] = [];
const polls: Record<string, number> = {};
let latePolls = 0;
let pollingOn = false;
const keepAlive = new Agent({ keepAlive: true, maxSockets: Number.POSITIVE_INFINITY });

/**
 * One HTTP call: its status (0 with the error's code as the body when it failed), and when the request was written
 * out (`sentAt`: after the connection was made, so a wait for a connect in a burst of them is not counted as the
 * server's).
 */
function httpCall(
  url: string,
  method: string,
  token: string,
  timeoutMs: number,
): Promise<{ status: number; body: string; sentAt: number }> {
  return new Promise((resolve) => {
    let sentAt = performance.now();
    const req = request(
      url,
      { method, agent: keepAlive, localAddress, headers: { authorization: `Bearer ${token}` }, timeout: timeoutMs },
      (res) => {
        let body = "";
        res.setEncoding("utf8");
        res.on("data", (d: string) => (body += d));
        res.on("end", () => resolve({ status: res.statusCode ?? 0, body, sentAt }));
      },
    );
    req.on("finish", () => (sentAt = performance.now()));
    req.on("timeout", () => req.destroy(new Error("timeout")));
    req.on("error", (err: NodeJS.ErrnoException) => resolve({ status: 0, body: err.code ?? err.message, sentAt }));
    req.end();
  });
}

/** One agent's long polls, one after another while polling is on; each message acknowledged before the next poll. */
async function pollLoop(p: Poller, timeoutS: number): Promise<void> {
  while (pollingOn) {
    p.waiting = true;
    const r = await httpCall(
      `${p.agent.url}/v1/messages/pending?timeout=${timeoutS}`,
      "GET",
      p.agent.token,
      (timeoutS + 30) * 1000,
    );
    p.waiting = false;
    const key = r.status === 0 ? r.body : String(r.status);
    polls[key] = (polls[key] ?? 0) + 1;
    if (performance.now() - r.sentAt > (timeoutS + 2) * 1000) latePolls++;
    if (r.status !== 200) {
      await new Promise((res) => setTimeout(res, reconnectDelayMs(2, Math.random)));
      continue;
    }
    let bigLast: string | undefined;
    for (const m of (JSON.parse(r.body) as { messages: { id: string; body: string }[] }).messages) {
      const seen = noteBig(m.body, p.bigSeen);
      if (seen !== undefined) {
        p.bigSeen = seen;
        bigLast = m.id;
        continue;
      }
      if (p.acked.has(m.id)) redelivered++;
      else if (!p.bodies.has(m.body)) {
        p.bodies.add(m.body);
        bodies.set(m.body, (bodies.get(m.body) ?? 0) + 1);
      }
      const ack = await httpCall(`${p.agent.url}/v1/messages/${m.id}/ack`, "POST", p.agent.token, 30_000);
      if (ack.status === 204) p.acked.add(m.id);
    }
    if (bigLast)
      await httpCall(`${p.agent.url}/v1/messages/${bigLast}/ack?through=true`, "POST", p.agent.token, 30_000);
  }
}

function startPolls(agents: ClientAgent[], timeoutS: number): ClientOpened {
  const started = performance.now();
  pollingOn = true;
  for (const agent of agents) {
    const p: Poller = { agent, waiting: false, acked: new Set(), bodies: new Set(), bigSeen: NO_BITS };
    pollers.push(p);
    void pollLoop(p, timeoutS);
  }
  return { type: "opened", ok: agents.length, failed: 0, ms: performance.now() - started };
}

function stats(): ClientStats {
  const u = process.cpuUsage();
  return {
    type: "stats",
    sockets: socks.length,
    ready: socks.reduce((n, s) => n + (s.ready ? 1 : 0), 0),
    refused: { ...refused },
    bodies: Object.fromEntries(bodies),
    redelivered,
    reconnects,
    polling: pollers.reduce((n, p) => n + (p.waiting ? 1 : 0), 0),
    polls: { ...polls },
    latePolls,
    lastReadyAt,
    big: { received: big.received, duplicates: big.duplicates, latency: { ...big.latency } },
    cpuMs: (u.user + u.system) / 1000,
    rssMb: process.memoryUsage.rss() / 2 ** 20,
  };
}

process.on("message", (cmd: ClientCommand) => {
  switch (cmd.type) {
    case "open":
      localAddress = cmd.localAddress;
      open(cmd.agents, cmd.width).then(send, (err: Error) => send({ type: "error", message: err.message }));
      break;
    case "reconnect":
      reconnecting = cmd.on;
      break;
    case "poll":
      localAddress = cmd.localAddress;
      send(startPolls(cmd.agents, cmd.timeoutS));
      break;
    case "stop-polls":
      pollingOn = false;
      keepAlive.destroy();
      break;
    case "stats":
      send(stats());
      break;
    case "exit":
      reconnecting = false;
      for (const s of socks) s.ws?.terminate();
      process.exit(0);
  }
});
