// webhook-endpoint-down: agents that take their messages only by webhook (no socket, no poll), an SDK fleet sending
// to them for 60 s, their endpoints answering 503 for 30 s of it, and the node that is not taking the sends killed
// (kill -9) once meanwhile and started again. Judged: no 201'd message lost (each reached its endpoint and got a 2xx),
// every message acknowledged by that 2xx in the end (the agents' pending lists empty), no webhook-id answered 2xx
// twice (a message acknowledged once is never sent again), every request signed (the receiver checks each with the
// Standard Webhooks package) and no error reaching an SDK caller.
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { setTimeout as sleep } from "node:timers/promises";
import { Webhook } from "standardwebhooks";
import { readBody } from "../../bench/lib/read-body.ts";
import { Flock } from "../../client/index.ts";
import { until } from "../helpers/wait.ts";
import type { Cluster } from "./faults.ts";
import { type FaultResult, notRun } from "./tracker.ts";
import { type Agent, register } from "./traffic.ts";

export const WEBHOOK_ENDPOINT_DOWN = {
  name: "webhook-endpoint-down",
  description: "endpoints answer 503 for 30 s of a 60 s send; the other node is killed once",
};

/** The settings the two nodes run with for this fault (test/chaos/run.ts passes them to both). */
export const WEBHOOK_NODE_ENV = {
  FLOCK_WEBHOOK_ALLOW_PRIVATE: "1",
  // a dead node's claimed deliveries move to the other within 3 s (30 s in production)
  FLOCK_WEBHOOK_CLAIM_IDLE_MS: "3000",
  FLOCK_WEBHOOK_SWEEP_MS: "2000",
};

const AGENTS = 8;
const PER_SECOND = 4; // per sender
const SEND_MS = 60_000;
const DOWN_FROM_MS = 15_000;
const DOWN_MS = 30_000;
const KILL_AT_MS = 30_000;
/** After the last send: how long every message has to reach its endpoint (the backoff after 30 s down is ~16-32 s). */
const DRAIN_MS = 90_000;

interface Hook {
  agent: Agent;
  signer: Webhook;
  /** webhook-id -> 2xx answers given to it. */
  acked: Map<string, number>;
  /** Message ids answered 2xx. */
  got: Set<string>;
  attempts: number;
  refusedWhileDown: number;
  badSignatures: number;
}

/** The agents' endpoints: one local server, a path per agent; while `down` every request answers 503. */
function receiver(hooks: Map<string, Hook>, state: { down: boolean; upAt?: number; firstAfter?: number }): Server {
  return createServer((req, res) => {
    void (async () => {
      const body = await readBody(req);
      const hook = hooks.get((req.url ?? "").replace(/^\/hook\//, ""));
      if (!hook) return void res.writeHead(404).end();
      hook.attempts++;
      if (state.down) {
        hook.refusedWhileDown++;
        return void res.writeHead(503).end();
      }
      let event: { type: string; data?: { id?: string } };
      try {
        event = hook.signer.verify(body, req.headers as Record<string, string>) as typeof event;
      } catch {
        hook.badSignatures++;
        return void res.writeHead(400).end();
      }
      const id = String(req.headers["webhook-id"]);
      hook.acked.set(id, (hook.acked.get(id) ?? 0) + 1);
      if (state.upAt !== undefined) state.firstAfter ??= Date.now();
      if (event.type === "message.created" && event.data?.id) hook.got.add(event.data.id);
      res.writeHead(204).end();
    })().catch(() => res.writeHead(500).end());
  });
}

async function call(url: string, token: string, method: string, path: string, json?: unknown) {
  const r = await fetch(`${url}${path}`, {
    method,
    headers: { authorization: `Bearer ${token}`, ...(json ? { "content-type": "application/json" } : {}) },
    body: json ? JSON.stringify(json) : undefined,
    signal: AbortSignal.timeout(10_000),
  });
  const text = await r.text();
  return { status: r.status, body: text ? (JSON.parse(text) as Record<string, unknown>) : {} };
}

export async function runWebhookFault(c: Cluster, log: (line: string) => void): Promise<FaultResult> {
  const { name, description } = WEBHOOK_ENDPOINT_DOWN;
  const hooks = new Map<string, Hook>();
  const state: { down: boolean; upAt?: number; firstAfter?: number } = { down: false };
  const server = receiver(hooks, state);
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  const port = (server.address() as AddressInfo).port;
  try {
    const receivers = await Promise.all(Array.from({ length: AGENTS }, (_, i) => register(c.sending.url, `hook-${i}`)));
    for (const agent of receivers) {
      const r = await call(c.receiving.url, agent.token, "PUT", "/v1/agents/me/webhook", {
        url: `http://127.0.0.1:${port}/hook/${agent.id}`,
      });
      if (r.status !== 201 || typeof r.body["secret"] !== "string")
        return notRun(name, description, `PUT /v1/agents/me/webhook answered ${r.status}: ${JSON.stringify(r.body)}`);
      hooks.set(agent.id, {
        agent,
        signer: new Webhook(r.body["secret"]),
        acked: new Map(),
        got: new Set(),
        attempts: 0,
        refusedWhileDown: 0,
        badSignatures: 0,
      });
    }
    const senders = await Promise.all(Array.from({ length: AGENTS }, (_, i) => register(c.sending.url, `hs-${i}`)));
    const sent = new Map<string, string>(); // message id -> receiving agent
    const errors: string[] = [];
    const started = Date.now();
    let stop = false;
    const loops = senders.map(async (s, i) => {
      const flock = new Flock({ baseUrl: c.sending.url, token: s.token });
      const to = receivers[i]!;
      for (let n = 0; !stop; n++) {
        const due = started + (n * 1000) / PER_SECOND;
        if (due > Date.now()) await sleep(due - Date.now());
        if (stop) break;
        try {
          const m = await flock.send(to.id, `hook ${i}-${n}`);
          sent.set(m.id, to.id);
        } catch (err) {
          errors.push(`${s.id}: ${(err as Error).message}`);
        }
      }
    });
    // the fault: endpoints down from 15 s to 45 s, the other node killed at 30 s and started again
    const fault = (async () => {
      await sleep(DOWN_FROM_MS);
      state.down = true;
      log(`  endpoints answer 503 (${((Date.now() - started) / 1000).toFixed(1)} s)`);
      await sleep(KILL_AT_MS - DOWN_FROM_MS);
      await c.receiving.signal("SIGKILL");
      log(`  ${c.receiving.name} node killed (${((Date.now() - started) / 1000).toFixed(1)} s)`);
      await c.receiving.start();
      await sleep(Math.max(0, started + DOWN_FROM_MS + DOWN_MS - Date.now()));
      state.down = false;
      state.upAt = Date.now();
      log(`  endpoints answer again (${((Date.now() - started) / 1000).toFixed(1)} s)`);
    })();
    await sleep(SEND_MS);
    stop = true;
    await Promise.all([...loops, fault]);
    const sendEnd = Date.now();
    const missing = () => [...sent].filter(([id, to]) => !hooks.get(to)!.got.has(id)).length;
    await until(() => missing() === 0, { ms: DRAIN_MS, every: 200, what: "every message at its endpoint" }).catch(
      () => {},
    );
    const drainedS = (Date.now() - sendEnd) / 1000;
    // the 2xx was the ack: nothing is left pending for any agent
    let pending = 0;
    await until(
      async () => {
        pending = 0;
        for (const a of receivers) {
          const r = await call(c.sending.url, a.token, "GET", "/v1/messages/pending?timeout=0&limit=100");
          pending += ((r.body["messages"] as unknown[] | undefined) ?? []).length;
        }
        return pending === 0;
      },
      { ms: 10_000, every: 500, what: "the pending lists empty" },
    ).catch(() => {});
    const all = [...hooks.values()];
    const twice = all.reduce((n, h) => n + [...h.acked.values()].filter((k) => k > 1).length, 0);
    const bad = all.reduce((n, h) => n + h.badSignatures, 0);
    const attempts = all.reduce((n, h) => n + h.attempts, 0);
    const refused = all.reduce((n, h) => n + h.refusedWhileDown, 0);
    const lost = missing();
    const failures: string[] = [];
    if (lost) failures.push(`${lost} of ${sent.size} messages never reached their endpoint with a 2xx`);
    if (pending) failures.push(`${pending} messages still pending after their 2xx`);
    if (twice) failures.push(`${twice} webhook-ids answered 2xx more than once`);
    if (bad) failures.push(`${bad} requests whose signature did not verify`);
    if (errors.length) failures.push(`${errors.length} errors reached an SDK caller (${errors[0]})`);
    if (refused === 0) failures.push("no request met a down endpoint (the fault did not happen)");
    if (state.firstAfter === undefined) failures.push("no endpoint got a request after it answered again");
    return {
      ...notRun(name, description, ""),
      sent: sent.size + errors.length,
      created: sent.size,
      delivered: sent.size - lost,
      lost,
      duplicates: twice,
      faultSeconds: DOWN_MS / 1000,
      // from the endpoints answering again to the first 2xx they gave
      recoverSeconds:
        state.upAt !== undefined && state.firstAfter !== undefined ? (state.firstAfter - state.upAt) / 1000 : null,
      failures,
      notes: [
        ["webhook requests", `${attempts} (${refused} answered 503 while the endpoints were down)`],
        ["webhook-ids answered 2xx twice", String(twice)],
        ["unverified signatures", String(bad)],
        ["pending after the drain", String(pending)],
        ["last message at its endpoint", `${drainedS.toFixed(1)} s after the last send`],
      ],
      verdict: `${sent.size} sent, 0 lost, each acknowledged once by its endpoint's 2xx`,
    };
  } finally {
    server.close();
    server.closeAllConnections();
  }
}
