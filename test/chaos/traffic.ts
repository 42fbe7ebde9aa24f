// The chaos traffic: agents registered over HTTP, senders posting direct or group messages at a bounded rate through
// the SDK (each send with its own Idempotency-Key, retried with it after a 5xx, a 409 "still running" or no answer),
// and receivers taking them by long poll (POST ack) or WebSocket (ack frames with a `ref`, so the ack is confirmed).
// Every request has a 5 s budget (a long poll: its wait plus 5 s); every outcome goes to the tracker.
// A refused ack is retried as a client would: a long poller retries its POST with backoff (250 ms doubling to 1 s, the
// Retry-After of an outage's 503) while it goes on polling; a WebSocket receiver waits for the node, which retries an
// ack it refused as `unavailable` on that socket and answers the ack's `ref` once it takes (its own retry only after
// WS_REFUSED_FALLBACK_MS, so a node that never retries shows as a late ack).
import { setTimeout as sleep } from "node:timers/promises";
import WebSocket from "ws";
import { Flock, newIdempotencyKey, type RetryPolicy } from "../../client/index.ts";
import { type Attempt, HANG_MS, type MessageRecord, type Tracker } from "./tracker.ts";

export interface Agent {
  id: string;
  token: string;
}

interface WireMessage {
  id: string;
  body: string;
}

/** What a failed fetch becomes in the statuses: "timeout" (our 5 s budget ran out) or the socket error's code. */
export function errorStatus(err: unknown): string {
  const e = err as { name?: string; message?: string; cause?: { code?: string; name?: string }; code?: string };
  if (e?.name === "TimeoutError" || e?.name === "AbortError") return "timeout";
  if (/handshake has timed out/.test(e?.message ?? "")) return "timeout"; // ws's handshakeTimeout: a hang too
  const code = e?.cause?.code ?? e?.code ?? e?.cause?.name ?? e?.name ?? "error";
  return code;
}

export async function register(url: string, name: string): Promise<Agent> {
  for (let attempt = 0; ; attempt++) {
    try {
      const r = await fetch(`${url}/v1/agents/register`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ display_name: name }),
        signal: AbortSignal.timeout(HANG_MS),
      });
      const body = (await r.json()) as { agent?: { id: string }; token?: string };
      if (r.status === 201 && body.agent && body.token) return { id: body.agent.id, token: body.token };
      if (attempt >= 20) throw new Error(`register answered ${r.status}: ${JSON.stringify(body)}`);
    } catch (err) {
      if (attempt >= 20) throw err;
    }
    await sleep(250);
  }
}

/** Lets a fault hold the receivers' acks back (deliveries go on), then let them all go at once. */
export class AckGate {
  private held: Promise<void> | undefined;
  private release: (() => void) | undefined;

  hold(): void {
    this.held ??= new Promise((r) => (this.release = r));
  }

  open(): void {
    this.release?.();
    this.held = this.release = undefined;
  }

  /** Resolves once acks may go. */
  wait(): Promise<void> {
    return this.held ?? Promise.resolve();
  }
}

/** Something that runs until stopped. */
export interface Actor {
  stop(): Promise<void>;
}

/** A group of `owner` and `member` (so a group message has the one recipient the tracker follows). */
export async function createGroup(url: string, owner: Agent, member: Agent): Promise<string> {
  const key = newIdempotencyKey(); // one group, however many attempts
  for (let attempt = 0; ; attempt++) {
    try {
      const r = await fetch(`${url}/v1/groups`, {
        method: "POST",
        headers: { "content-type": "application/json", authorization: `Bearer ${owner.token}`, "idempotency-key": key },
        body: JSON.stringify({ name: "chaos", members: [member.id] }),
        signal: AbortSignal.timeout(HANG_MS),
      });
      const body = (await r.json()) as { group?: { id: string } };
      if (r.status === 201 && body.group) return body.group.id;
      if (attempt >= 20) throw new Error(`group create answered ${r.status}: ${JSON.stringify(body)}`);
    } catch (err) {
      if (attempt >= 20) throw err;
    }
    await sleep(250);
  }
}

/**
 * The senders' retries: the SDK's (SPEC section 7), with a budget that outlasts a node's restart and the server's
 * hold on a key whose request died with its node (a retry meanwhile answers 409 "still running" with Retry-After 1).
 */
export const SEND_RETRY: RetryPolicy = { maxAttempts: 40, baseMs: 250, capMs: 2_000 };

/**
 * A fetch for one sender's SDK client: each attempt within the 5 s budget, recorded as a "send" request and as an
 * attempt of the message whose Idempotency-Key it carries.
 */
function recordingFetch(t: Tracker, byKey: Map<string, MessageRecord>): typeof fetch {
  return async (input, init) => {
    const key = new Headers(init?.headers).get("idempotency-key");
    const rec = key === null ? undefined : byKey.get(key);
    const startedAt = Date.now();
    const budget = AbortSignal.timeout(HANG_MS);
    const attempt: Attempt = { startedAt, endedAt: startedAt, status: "error" };
    try {
      const res = await fetch(input, {
        ...init,
        signal: init?.signal ? AbortSignal.any([init.signal, budget]) : budget,
      });
      const text = await res.text(); // the body within the budget too
      attempt.status = String(res.status);
      if (res.headers.get("idempotency-replayed") === "true") attempt.replayed = true;
      if (res.status === 503 && storedUnknown(text)) attempt.storedUnknown = true;
      return new Response(res.status === 204 ? null : text, { status: res.status, headers: res.headers });
    } catch (err) {
      attempt.status = errorStatus(err);
      throw err;
    } finally {
      attempt.endedAt = Date.now();
      t.request("send", startedAt, attempt.status);
      rec?.attempts.push(attempt);
    }
  };
}

/** A 503's body saying the node could not tell whether the send was stored (`"stored":"unknown"`). */
export function storedUnknown(text: string): boolean {
  try {
    return (JSON.parse(text) as { stored?: unknown }).stored === "unknown";
  } catch {
    return false;
  }
}

/**
 * One sender: `perSecond` sends to `to` (directly, or to `group`, whose other member `to` is), paced by a timer (not
 * by answers, so a hanging node does not slow the offered load), at most `maxInFlight` at once. Each send is one SDK
 * call with its own Idempotency-Key: a send that got no 201 (no answer, a 5xx, its key still running) is retried
 * with that key until it gets one (SEND_RETRY), as any SDK user's would be.
 */
export function startSender(
  t: Tracker,
  url: string,
  from: Agent,
  to: Agent,
  index: number,
  perSecond: number,
  group?: string,
  maxInFlight = 20,
): Actor {
  let seq = 0;
  let inFlight = 0;
  const running = new Set<Promise<void>>();
  const byKey = new Map<string, MessageRecord>();
  // the harness paces the sends itself: the SDK's own throttle (8/s) stays out of the way
  const flock = new Flock({
    baseUrl: url,
    token: from.token,
    fetch: recordingFetch(t, byKey),
    retry: SEND_RETRY,
    sendsPerSecond: 1e6,
  });
  const sendOne = async () => {
    const tag = t.newTag(index, seq++);
    const rec = t.sent(tag, to.id, Date.now());
    const key = newIdempotencyKey();
    rec.key = key;
    byKey.set(key, rec);
    try {
      const m = await (group === undefined
        ? flock.send(to.id, tag, {}, { idempotencyKey: key })
        : flock.sendGroup(group, tag, {}, { idempotencyKey: key }));
      rec.id = m.id;
    } catch {
      // the last attempt's status says how it ended
    } finally {
      byKey.delete(key);
    }
    rec.answeredAt = Date.now();
    rec.status = rec.attempts.at(-1)?.status ?? "error";
  };
  const timer = setInterval(() => {
    if (inFlight >= maxInFlight) return;
    inFlight++;
    const p = sendOne().finally(() => {
      inFlight--;
      running.delete(p);
    });
    running.add(p);
  }, 1000 / perSecond);
  return {
    async stop() {
      clearInterval(timer);
      await Promise.all([...running]);
    },
  };
}

const POLL_WAIT_S = 2;
/** A long poller's retries of a refused ack: 250 ms, doubling, at most 1 s apart (an outage's Retry-After). */
const ACK_RETRY_FIRST_MS = 250;
const ACK_RETRY_CAP_MS = 1_000;

type AckOutcome = "ok" | "final" | "retry";

/**
 * A long-poll receiver: GET /v1/messages/pending, then POST every ack; retries on errors with a small backoff. An
 * ack refused (a 5xx, 429, or no answer) is retried with backoff until it takes, while the receiver goes on polling
 * and acking what each poll hands out (so a node that hands the message out again in a hot loop while its acks fail
 * shows; a poll that hands out a message whose ack did not reach the node yet is acked at once, as the SDK does).
 * A 503's Retry-After holds its next poll and ack retries until then, as the SDK's retries wait (a shutting-down
 * node's says when its listening socket will have closed).
 */
export function startPoller(t: Tracker, url: string, me: Agent, gate = new AckGate()): Actor {
  const stop = new AbortController();
  const auth = { authorization: `Bearer ${me.token}` };
  /** Not before this (ms since the epoch): the last Retry-After heard. */
  let holdUntil = 0;
  const heard = (r: Response) => {
    const ra = Number(r.headers.get("retry-after"));
    if (r.status >= 500 && Number.isFinite(ra) && ra > 0) holdUntil = Math.max(holdUntil, Date.now() + ra * 1000);
  };
  const held = (ms: number) => Math.max(ms, holdUntil - Date.now());
  /** Acks being retried, by message id. */
  const retrying = new Map<string, Promise<void>>();
  const loop = async () => {
    let failures = 0;
    while (!stop.signal.aborted) {
      const startedAt = Date.now();
      const fetchSeq = t.mark();
      let messages: WireMessage[] | undefined;
      try {
        const r = await fetch(`${url}/v1/messages/pending?timeout=${POLL_WAIT_S}&limit=100`, {
          headers: auth,
          signal: AbortSignal.any([AbortSignal.timeout(POLL_WAIT_S * 1000 + HANG_MS), stop.signal]),
        });
        const text = await r.text();
        heard(r);
        t.request("poll", startedAt, String(r.status), POLL_WAIT_S * 1000);
        if (r.status === 200) messages = (JSON.parse(text) as { messages: WireMessage[] }).messages;
      } catch (err) {
        if (stop.signal.aborted) return;
        t.request("poll", startedAt, errorStatus(err), POLL_WAIT_S * 1000);
      }
      if (!messages) {
        await sleep(held(Math.min(1000, 100 * 2 ** failures++)));
        continue;
      }
      failures = 0;
      const at = Date.now();
      const acks: Promise<AckOutcome>[] = [];
      for (const m of messages) {
        const rec = t.delivered(m.body, { at, id: m.id, fetchSeq, via: "poll" });
        acks.push(
          gate.wait().then(async () => {
            const outcome = await ack(m.id, rec);
            if (outcome === "retry") retryAck(m.id, rec);
            return outcome;
          }),
        );
      }
      // the next poll starts only after every ack has answered, so a message handed out again on it was
      // handed out after its 204
      const results = await Promise.all(acks);
      if (results.some((o) => o !== "ok")) await sleep(200);
    }
  };
  const retryAck = (id: string, rec: MessageRecord | undefined) => {
    if (rec) t.ackRefused(rec, Date.now());
    if (retrying.has(id)) return; // retried already (handed out again meanwhile, and acked again at once)
    const run = async () => {
      for (let delay = ACK_RETRY_FIRST_MS; !stop.signal.aborted; delay = Math.min(delay * 2, ACK_RETRY_CAP_MS)) {
        try {
          await sleep(held(delay), undefined, { signal: stop.signal });
        } catch {
          return; // stopped
        }
        if ((await ack(id, rec)) !== "retry") return;
      }
    };
    retrying.set(
      id,
      run().finally(() => retrying.delete(id)),
    );
  };
  const ack = async (id: string, rec: MessageRecord | undefined): Promise<AckOutcome> => {
    const startedAt = Date.now();
    try {
      const r = await fetch(`${url}/v1/messages/${id}/ack`, {
        method: "POST",
        headers: auth,
        signal: AbortSignal.timeout(HANG_MS),
      });
      await r.arrayBuffer();
      heard(r);
      t.request("ack", startedAt, String(r.status));
      if (r.status === 204 && rec) t.ackConfirmed(rec, Date.now());
      if (r.status === 204) return "ok";
      return r.status >= 500 || r.status === 429 ? "retry" : "final";
    } catch (err) {
      t.request("ack", startedAt, errorStatus(err));
      return "retry";
    }
  };
  const done = loop();
  return {
    async stop() {
      stop.abort();
      await done;
      await Promise.all([...retrying.values()]);
    },
  };
}

interface Frame {
  type: string;
  message?: WireMessage;
  ref?: string;
  error?: string;
}

interface PendingAck {
  id: string;
  rec: MessageRecord | undefined;
  sentAt: number;
  timer: NodeJS.Timeout;
  /** Refused as `unavailable`: the node retries it and answers this ref when it takes. */
  refused?: boolean;
}

/**
 * How long a WebSocket receiver waits for the node's own retry of an ack it refused as `unavailable` before acking
 * again itself (longer than an outage and ACK_RECOVERY_MS together, so a node that never retries shows as late).
 */
const WS_REFUSED_FALLBACK_MS = 15_000;

/**
 * A WebSocket receiver: acks every message with a `ref`, records the confirmation, retries an ack that failed
 * or got no answer within 5 s, and reconnects (with backoff) whenever the socket closes; the server sends every
 * unacknowledged message again on connect. An ack refused as `unavailable` is left to the node, which retries it on
 * the socket and confirms its ref once it takes (recorded as a "ws-ack-retried" request); the receiver acks again
 * only if that has not come within WS_REFUSED_FALLBACK_MS.
 */
export function startWsReceiver(t: Tracker, url: string, me: Agent, gate = new AckGate()): Actor {
  const stop = new AbortController();
  let refSeq = 0;
  let current: WebSocket | undefined;
  const session = (): Promise<boolean> =>
    new Promise((resolve) => {
      const startedAt = Date.now();
      const ws = new WebSocket(`${url.replace(/^http/, "ws")}/v1/ws`, ["flock.json"], {
        headers: { authorization: `Bearer ${me.token}` },
        handshakeTimeout: HANG_MS,
      });
      current = ws;
      let ready = false;
      let opened = false;
      const pending = new Map<string, PendingAck>();
      const sendAck = (id: string, rec: MessageRecord | undefined) => {
        if (ws.readyState !== WebSocket.OPEN) return;
        const ref = `r${refSeq++}`;
        const sentAt = Date.now();
        const timer = setTimeout(() => {
          // no answer within 5 s on a socket that is still open: a hang; try again
          if (!pending.delete(ref)) return;
          t.request("ws-ack", sentAt, "timeout");
          sendAck(id, rec);
        }, HANG_MS);
        pending.set(ref, { id, rec, sentAt, timer });
        ws.send(JSON.stringify({ type: "ack", id, ref }));
      };
      ws.on("upgrade", (res) => {
        t.request("ws-connect", startedAt, String(res.statusCode));
        opened = true;
      });
      ws.on("unexpected-response", (_req, res) => {
        t.request("ws-connect", startedAt, String(res.statusCode));
        opened = true;
        res.resume();
        ws.terminate();
      });
      ws.on("message", (data) => {
        let frame: Frame;
        try {
          frame = JSON.parse(data.toString()) as Frame;
        } catch {
          return;
        }
        if (frame.type === "ready") ready = true;
        else if (frame.type === "message" && frame.message) {
          const rec = t.delivered(frame.message.body, {
            at: Date.now(),
            id: frame.message.id,
            fetchSeq: t.mark(),
            via: "ws",
          });
          const id = frame.message.id;
          void gate.wait().then(() => sendAck(id, rec));
        } else if (frame.type === "ack" && frame.ref) {
          const p = pending.get(frame.ref);
          if (!p) return;
          pending.delete(frame.ref);
          clearTimeout(p.timer);
          // the node's retry of a refused ack takes as long as the outage: no hang
          if (p.refused) t.request("ws-ack-retried", p.sentAt, "ok", Number.POSITIVE_INFINITY);
          else t.request("ws-ack", p.sentAt, "ok");
          if (p.rec) t.ackConfirmed(p.rec, Date.now());
        } else if (frame.type === "error") {
          const p = frame.ref ? pending.get(frame.ref) : undefined;
          t.request(p ? "ws-ack" : "ws-frame", p?.sentAt ?? Date.now(), `ws-${frame.error ?? "error"}`);
          if (!p || !frame.ref) return;
          if (p.rec) t.ackRefused(p.rec, Date.now());
          clearTimeout(p.timer);
          if (frame.error === "unavailable") {
            // the node retries it on this socket and answers this ref when it takes; ack again only as a fallback
            p.refused = true;
            p.sentAt = Date.now();
            p.timer = setTimeout(() => {
              if (p.rec?.ackConfirmedAt === undefined) sendAck(p.id, p.rec);
            }, WS_REFUSED_FALLBACK_MS);
            return;
          }
          pending.delete(frame.ref);
          setTimeout(() => sendAck(p.id, p.rec), 250);
        }
      });
      const finish = (why: string) => {
        for (const p of pending.values()) clearTimeout(p.timer);
        pending.clear();
        // how an open session ended (1006 when its node died, 1001 on shutdown); a session may last any time
        if (opened && ready && !stop.signal.aborted) t.request("ws-close", startedAt, why, Number.POSITIVE_INFINITY);
        if (!opened) t.request("ws-connect", startedAt, why);
        opened = true;
        resolve(ready);
      };
      ws.on("close", (code) => finish(`close-${code}`));
      ws.on("error", (err) => {
        if (!opened) t.request("ws-connect", startedAt, errorStatus(err));
        opened = true;
      });
    });
  const loop = async () => {
    let failures = 0;
    while (!stop.signal.aborted) {
      const wasReady = await session();
      if (stop.signal.aborted) return;
      failures = wasReady ? 0 : failures + 1;
      await sleep(Math.min(1000, 100 * 2 ** failures));
    }
  };
  const done = loop();
  return {
    async stop() {
      stop.abort();
      current?.terminate();
      await done;
    },
  };
}
