// Delivery scenarios: send-to-receipt latency over long polling and WebSocket, and group fan-out over WebSocket.
import WebSocket from "ws";
import { AckBatch } from "../../client/ack-batch.ts";
import { realClock } from "../../client/throttle.ts";
import { fullMessage } from "../../client/ws.ts";
import { type Member, pool, registerFleet } from "../lib/fleet.ts";
import { fanout } from "../lib/fanout.ts";
import { webhookReceivers } from "../lib/webhook-receiver.ts";
import { keyHeader } from "../lib/idempotency.ts";
import { summarize } from "../lib/load.ts";
import { atRate } from "../lib/rate.ts";
import { RawHttp } from "../lib/raw-http.ts";
import type { Scenario, ScenarioContext, ScenarioResult } from "../lib/scenario.ts";

const RATE = Number(process.env["BENCH_RATE"] ?? 2000);
const WARMUP_S = 2;

interface Sent {
  at: Map<string, number>;
  latencies: number[];
}

async function sendStamped(
  http: RawHttp,
  from: Member,
  to: Member,
  key: string,
  sent: Sent,
  statuses: Record<string, number>,
) {
  sent.at.set(key, performance.now());
  const r = await http.request("POST", "/v1/messages", from.token, { to: to.id, body: key }, keyHeader());
  statuses[r.status] = (statuses[r.status] ?? 0) + 1;
  if (r.status !== 201) sent.at.delete(key);
}

function got(sent: Sent, body: string) {
  const t0 = sent.at.get(body);
  if (t0 === undefined) return;
  sent.at.delete(body);
  sent.latencies.push(performance.now() - t0);
}

async function deliverRun(ctx: ScenarioContext, mode: "poll" | "ws" | "webhook"): Promise<ScenarioResult> {
  const retriesBefore = wsRetries.count;
  const n = Math.max(4, ctx.agents);
  ctx.progress(`registering ${n} senders and ${n} receivers`);
  const senders = await registerFleet(ctx.url, n, `${mode}-s`);
  const receivers = await registerFleet(ctx.url, n, `${mode}-r`);
  const sent: Sent = { at: new Map(), latencies: [] };
  const statuses: Record<string, number> = {};
  let stop = false;
  const http = new RawHttp(ctx.url, 128);
  const closers: (() => void)[] = [() => http.close()];
  let refusedHooks = () => 0;
  if (mode === "poll") {
    for (const r of receivers) {
      const own = new RawHttp(ctx.url, 1); // the receiver's long poll holds its own connection
      closers.push(() => own.close());
      void (async () => {
        while (!stop) {
          const res = await own.request("GET", "/v1/messages/pending?timeout=5&limit=100", r.token);
          const body = JSON.parse(res.body) as { messages?: { id: string; body: string }[] };
          for (const m of body.messages ?? []) got(sent, m.body);
          await Promise.all(
            (body.messages ?? []).map((m) => http.request("POST", `/v1/messages/${m.id}/ack`, r.token)),
          );
        }
      })().catch(() => {});
    }
  } else if (mode === "webhook") {
    // each message POSTed to this machine's endpoint; its 204 is the ack
    const hooks = await webhookReceivers(receivers, (body) => got(sent, body));
    closers.push(() => void hooks.close());
    refusedHooks = hooks.refused;
  } else {
    await pool(receivers, 32, async (r) => {
      const ws = await openWs(ctx.wsUrl, r.token, (frame, sock) => {
        if (frame.type !== "message") return;
        got(sent, frame.message.body);
        sock.send(JSON.stringify({ type: "ack", id: frame.message.id }));
      });
      closers.push(() => ws.terminate());
    });
  }
  const pairOf = (i: number) => [senders[i % n]!, receivers[(i * 31 + 7) % n]!] as const;
  const fire = (i: number) => sendStamped(http, ...pairOf(i), `${i}`, sent, statuses);
  // Warm up at the same rate over the same pairs (the first sends create the threads, make the inboxes
  // and compile the hot paths), let the backlog drain, then measure from a clean start.
  ctx.progress(`warming up: ${RATE}/s for ${WARMUP_S}s`);
  const warm = await atRate(RATE, WARMUP_S, 512, (i) => sendStamped(http, ...pairOf(i), `w${i}`, sent, statuses));
  if (warm.errors > 0 || (statuses["201"] ?? 0) < warm.fired * 0.99) {
    throw new Error(`warm-up failed: ${warm.fired} fired, ${warm.errors} errors, statuses ${JSON.stringify(statuses)}`);
  }
  for (let waited = 0; sent.at.size > 0 && waited < 5000; waited += 50) await new Promise((res) => setTimeout(res, 50));
  sent.at.clear();
  sent.latencies.length = 0;
  for (const k of Object.keys(statuses)) delete statuses[k];
  ctx.progress(`sending ${RATE}/s for ${ctx.duration}s`);
  const started = performance.now();
  const r = await atRate(RATE, ctx.duration, 512, fire);
  await new Promise((res) => setTimeout(res, 1000));
  stop = true;
  for (const c of closers) c();
  const seconds = (performance.now() - started) / 1000 - 1;
  const s = summarize(sent.latencies, seconds);
  return {
    ...s,
    statuses,
    errors: r.errors + sent.at.size,
    baseline: mode === "ws" ? "ws" : "http",
    unit: "msg/s",
    target: `p99 < 10 ms at ${RATE} msg/s`,
    notes:
      `offered ${RATE}/s; ${r.dropped} not sent (over 512 outstanding); ${sent.at.size} never received${retried(retriesBefore)}` +
      (mode === "webhook" ? `; ${refusedHooks()} requests whose signature did not verify` : ""),
  };
}

export const deliver: Scenario = {
  name: "deliver",
  description: "send to long-polling receivers; latency from send to receipt, then ack",
  run: (ctx) => deliverRun(ctx, "poll"),
};

export const webhook: Scenario = {
  name: "webhook",
  description: "send to agents taking messages by webhook; latency from send to the endpoint's 204 (the ack)",
  run: (ctx) => deliverRun(ctx, "webhook"),
};

export const ws: Scenario = {
  name: "ws",
  description: "send to WebSocket receivers; latency from send to receipt, then ack frame",
  run: (ctx) => deliverRun(ctx, "ws"),
};

// biome-style frame type kept loose: the bench only reads a few fields
interface Frame {
  type: string;
  message: { id: string; body: string };
}

/** Connects the server closed before they were ready, retried (as the SDK reconnects); reported in the notes. */
export const wsRetries = { count: 0 };

/** Open a WebSocket and wait for its ready frame; a socket closed before that is opened again (twice at most). */
export async function openWs(
  url: string,
  token: string | undefined,
  onFrame: (f: Frame, ws: WebSocket) => void,
  readyType = "ready",
): Promise<WebSocket> {
  for (let attempt = 0; ; attempt++) {
    try {
      return await openOnce(url, token, onFrame, readyType);
    } catch (err) {
      if (!(err instanceof ClosedEarly) || attempt >= 2) throw err;
      wsRetries.count++;
    }
  }
}

class ClosedEarly extends Error {}

function retried(before: number): string {
  const n = wsRetries.count - before;
  return n > 0 ? `; ${n} WebSocket connect(s) closed by the server before ready, retried` : "";
}

function openOnce(
  url: string,
  token: string | undefined,
  onFrame: (f: Frame, ws: WebSocket) => void,
  readyType: string,
): Promise<WebSocket> {
  return new Promise((resolve, reject) => {
    const sock = new WebSocket(
      url,
      token ? ["flock.json.lean", "flock.json"] : [], // lean message frames, as the SDK asks for them
      token ? { headers: { authorization: `Bearer ${token}` } } : {},
    );
    let ready = false;
    const timer = setTimeout(() => reject(new Error("websocket open timed out")), 20_000);
    sock.on("message", (data) => {
      const f = JSON.parse(data.toString()) as Frame;
      if (f.type === readyType) {
        ready = true;
        clearTimeout(timer);
        resolve(sock);
      }
      onFrame(f, sock);
    });
    sock.on("open", () => {
      if (!token) {
        ready = true;
        clearTimeout(timer);
        resolve(sock);
      }
    });
    sock.on("close", (code) => {
      if (ready) return;
      clearTimeout(timer);
      reject(new ClosedEarly(`websocket closed (${code}) before it was ready`));
    });
    sock.on("error", (e) => {
      clearTimeout(timer);
      reject(e);
    });
  });
}

export const group: Scenario = {
  name: "group",
  description: "one send to a 1,000-member group, all members on WebSocket, acking as the SDK does",
  async run(ctx) {
    const size = Number(process.env["BENCH_GROUP_SIZE"] ?? 1000);
    const retriesBefore = wsRetries.count;
    ctx.progress(`registering ${size} members`);
    const fleet = await registerFleet(ctx.url, size, "group");
    const owner = fleet[0]!;
    const g = await owner.flock.createGroup({ name: "bench", members: [] });
    for (let i = 1; i < size; i += 200) {
      await owner.flock.http.request("POST", `/v1/groups/${g.id}/members`, {
        json: { members: fleet.slice(i, i + 200).map((m) => m.id) },
      });
    }
    const http = new RawHttp(ctx.url, 2);
    const probe = fanout({
      receivers: size - 1,
      duration: ctx.duration,
      inFlight: 2,
      publish: async (seq) => {
        const r = await http.request(
          "POST",
          `/v1/groups/${g.id}/messages`,
          owner.token,
          { body: String(seq) },
          keyHeader(),
        );
        if (r.status !== 201) throw new Error(`group send ${r.status}`);
      },
    });
    const socks: WebSocket[] = [];
    const batches = new Map<WebSocket, AckBatch>();
    const acksOf = (sock: WebSocket) => {
      let b = batches.get(sock);
      if (b === undefined) {
        b = new AckBatch(async (id, through) => {
          if (sock.readyState === WebSocket.OPEN) sock.send(JSON.stringify({ type: "ack", id, through }));
        }, realClock);
        batches.set(sock, b);
      }
      return b;
    };
    ctx.progress(`connecting ${size - 1} members over WebSocket`);
    await pool(fleet.slice(1), 32, async (m) => {
      socks.push(
        await openWs(ctx.wsUrl, m.token, (f, sock) => {
          if (f.type !== "message") return;
          probe.received(Number(f.message.body));
          // acked as the SDK acks group messages: cumulative, once per 100 handled or a second (client/ack-batch.ts)
          acksOf(sock).handled(fullMessage(f.message as unknown as Record<string, unknown>, m.id));
        }),
      );
    });
    ctx.progress(`sending to the group for ${ctx.duration}s`);
    const r = await probe.run();
    for (const s of socks) s.terminate();
    http.close();
    return {
      ...r,
      statuses: {},
      baseline: "ws",
      unit: "deliveries/s",
      target: "p99 < 50 ms; >= 0.3x",
      notes: `${r.published} sends to ${size - 1} receivers; ${r.complete} fully delivered within 5 s${retried(retriesBefore)}`,
    };
  },
};

/** The WebSocket baseline: the same fan-out through a bare uWS server's pub/sub. */
export async function wsBaseline(url: string, receivers: number, duration: number) {
  const box: { pub?: WebSocket } = {};
  const probe = fanout({
    receivers,
    duration,
    inFlight: 2,
    publish: async (seq) => {
      box.pub!.send(`pub:${seq}`);
    },
  });
  const socks: WebSocket[] = [];
  await pool(Array.from({ length: receivers }), 32, async () => {
    socks.push(
      await openWs(url, undefined, () => {}).then((s) => {
        s.on("message", (d) => probe.received(Number(d.toString())));
        return s;
      }),
    );
  });
  box.pub = await openWs(url, undefined, () => {});
  const r = await probe.run();
  for (const s of socks) s.terminate();
  box.pub.terminate();
  return r;
}
