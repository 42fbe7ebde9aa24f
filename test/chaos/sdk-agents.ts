// Agents that are the SDK itself (client/index.ts), as an application uses it: one `Flock` per agent, sending with its
// own retries and Idempotency-Keys, and receiving through `messages()` (half `transport: "ws"`, half long polls). The
// harness only watches: each agent's `fetch` (the SDK's option) and the WebSocket class the SDK finds on globalThis
// record what went over the wire, so the tracker learns every send attempt, every poll's start, every frame's arrival
// and every ack the node confirmed (a 204, or the ack frame answering the SDK's `ref`), without changing what the SDK
// does. Anything the SDK throws at its caller (a send that gave up, an iterator that ended in an error) is an error
// that reached the application.
//
// "Receiving": a WebSocket agent is receiving from its socket's `ready` frame until the socket closes; a long-poll
// agent from the start of a poll the node answers 200 until a poll ends otherwise (a 503, a 502, no answer). The gaps
// between are the time an agent could not be reached; the fault judges the longest.
import { setMaxListeners } from "node:events";
import { setTimeout as sleep } from "node:timers/promises";
import WebSocket from "ws";
import { Flock, newIdempotencyKey } from "../../client/index.ts";
import { type Attempt, HANG_MS, type MessageRecord, type Tracker } from "./tracker.ts";
import { type Agent, errorStatus, storedUnknown } from "./traffic.ts";

/** The SDK's long-poll wait (its default). */
export const POLL_TIMEOUT_S = 25;

export interface SdkAgent extends Agent {
  index: number;
  via: "ws" | "poll";
  /** Whom it sends to: directly, or through `group` (a group of the two). */
  to: Agent;
  group?: string;
}

/** One time an agent could not receive: from the loss of its socket or poll to its next `ready` or answered poll. */
export interface Gap {
  via: "ws" | "poll";
  from: number;
  ms: number;
  /** Still cut off when the fleet stopped (the gap runs to then). */
  never?: boolean;
}

interface Delivered {
  rec: MessageRecord;
  thread: string;
  /** The message id's number (ids grow with time, so a cumulative ack covers the thread's ids up to its own). */
  n: bigint;
}

/** What the harness keeps of one agent. */
class Watch {
  /** Message id -> Tracker.mark() of the poll's start or the frame's arrival that brought it last. */
  readonly arrival = new Map<string, number>();
  readonly delivered = new Map<string, Delivered>();
  /** Since when it cannot receive (undefined: it can, or has not started). */
  downSince: number | undefined;
  readonly byKey = new Map<string, MessageRecord>();
  seq = 0;
  inFlight = 0;

  constructor(readonly agent: SdkAgent) {}
}

const digits = (id: string) => BigInt(id.replace(/^msg_/, ""));

export class SdkFleet {
  readonly gaps: Gap[] = [];
  /** What reached an SDK caller: `send: <error>` or `receive ws: <error>`. */
  readonly sdkErrors: string[] = [];
  /** Sockets closed and polls cut (not by the harness's stop): how many times an agent lost its node. */
  readonly cuts = { ws: 0, poll: 0 };
  private readonly watches: Watch[];
  private readonly byToken = new Map<string, Watch>();
  private readonly stopping = new AbortController();
  private readonly receivers: Promise<void>[] = [];
  private readonly flocks: Flock[];
  private readonly sends = new Set<Promise<void>>();
  private sender: NodeJS.Timeout | undefined;
  private readonly priorWebSocket: unknown;

  constructor(
    private readonly t: Tracker,
    url: string,
    agents: SdkAgent[],
  ) {
    setMaxListeners(0, this.stopping.signal); // every agent's loop listens to it
    this.watches = agents.map((a) => new Watch(a));
    for (const w of this.watches) this.byToken.set(w.agent.token, w);
    this.flocks = this.watches.map((w) => new Flock({ baseUrl: url, token: w.agent.token, fetch: this.fetchFor(w) }));
    // the SDK takes the platform's WebSocket when there is one (Node 22+), else `ws`: it finds this one, which is `ws`
    const g = globalThis as { WebSocket?: unknown };
    this.priorWebSocket = g.WebSocket;
    g.WebSocket = this.socketClass();
  }

  /** Agents whose socket has said `ready` or whose first poll is under way. */
  receiving = 0;
  private readonly started = new Set<Watch>();

  /** Starts every agent's `messages()` loop. */
  receive(): void {
    this.watches.forEach((w, i) => this.receivers.push(this.consume(w, this.flocks[i]!)));
  }

  /** Sends `perSecond` messages in all, spread over the agents in turn, each one SDK call. */
  send(perSecond: number): void {
    const tickMs = 50;
    let owed = 0;
    let next = 0;
    let last = performance.now();
    this.sender = setInterval(() => {
      // by the clock, not by ticks: a busy event loop fires fewer ticks, not fewer sends
      const now = performance.now();
      owed += (perSecond * (now - last)) / 1000;
      last = now;
      for (; owed >= 1; owed--) {
        const i = next++ % this.watches.length;
        const w = this.watches[i]!;
        if (w.inFlight >= 3) {
          this.skipped++; // an agent's sends still retrying: the offered load does not pile up on it
          continue;
        }
        const p = this.sendOne(w, this.flocks[i]!).finally(() => this.sends.delete(p));
        this.sends.add(p);
      }
    }, tickMs);
  }

  /** Sends skipped because their agent had 3 still retrying. */
  skipped = 0;

  async stopSending(): Promise<void> {
    clearInterval(this.sender);
    await Promise.all([...this.sends]);
  }

  /** Ends every receiving loop (the SDK closes its sockets and aborts its polls) and gives the global back. */
  async stop(): Promise<void> {
    // an agent still cut off now never came back: its gap runs to here
    const now = Date.now();
    for (const w of this.watches) {
      if (w.downSince !== undefined && !this.stopping.signal.aborted)
        this.gaps.push({ via: w.agent.via, from: w.downSince, ms: now - w.downSince, never: true });
    }
    this.stopping.abort();
    await Promise.all(this.receivers);
    const g = globalThis as { WebSocket?: unknown };
    if (this.priorWebSocket === undefined) delete g.WebSocket;
    else g.WebSocket = this.priorWebSocket;
  }

  private async sendOne(w: Watch, flock: Flock): Promise<void> {
    const a = w.agent;
    const tag = this.t.newTag(a.index, w.seq++);
    const rec = this.t.sent(tag, a.to.id, Date.now());
    const key = newIdempotencyKey();
    rec.key = key;
    w.byKey.set(key, rec);
    w.inFlight++;
    try {
      const m = await (a.group === undefined
        ? flock.send(a.to.id, tag, {}, { idempotencyKey: key })
        : flock.sendGroup(a.group, tag, {}, { idempotencyKey: key }));
      rec.id = m.id;
    } catch (err) {
      this.sdkErrors.push(`send: ${describe(err)}`);
    } finally {
      w.inFlight--;
      w.byKey.delete(key);
    }
    rec.answeredAt = Date.now();
    rec.status = rec.attempts.at(-1)?.status ?? "error";
  }

  private async consume(w: Watch, flock: Flock): Promise<void> {
    const signal = this.stopping.signal;
    while (!signal.aborted) {
      try {
        for await (const m of flock.messages({ transport: w.agent.via, signal, timeout: POLL_TIMEOUT_S })) {
          if (m.from.id === w.agent.id) continue; // its own group message (the WebSocket stream skips those itself)
          const fetchSeq = w.arrival.get(m.id) ?? this.t.mark();
          const rec = this.t.delivered(m.body, { at: Date.now(), id: m.id, fetchSeq, via: w.agent.via });
          if (rec) w.delivered.set(m.id, { rec, thread: m.thread_id, n: digits(m.id) });
        }
      } catch (err) {
        if (signal.aborted) return;
        // the iterator ended in an error: the application's loop would have ended here; go on receiving
        this.sdkErrors.push(`receive ${w.agent.via}: ${describe(err)}`);
        await sleep(250);
      }
    }
  }

  /** The node confirmed an ack: of `id` alone, or (`through`) of every message of its thread up to `id`. */
  private acked(w: Watch, id: string, through: boolean): void {
    const at = Date.now();
    const one = w.delivered.get(id);
    if (!through) {
      if (one) this.t.ackConfirmed(one.rec, at);
      return;
    }
    const n = digits(id);
    for (const d of w.delivered.values()) if (d.thread === one?.thread && d.n <= n) this.t.ackConfirmed(d.rec, at);
  }

  private start(w: Watch): void {
    if (this.started.has(w)) return;
    this.started.add(w);
    this.receiving++;
  }

  private up(w: Watch, at: number): void {
    this.start(w);
    if (w.downSince === undefined) return;
    this.gaps.push({ via: w.agent.via, from: w.downSince, ms: Math.max(0, at - w.downSince) });
    w.downSince = undefined;
  }

  private down(w: Watch, at: number): void {
    if (this.stopping.signal.aborted || !this.started.has(w)) return;
    if (w.downSince === undefined) this.cuts[w.agent.via]++;
    w.downSince ??= at;
  }

  /** A fetch for one agent's SDK: sends, polls and acks recorded, each within its budget. */
  private fetchFor(w: Watch): typeof fetch {
    const t = this.t;
    return async (input, init) => {
      const url = new URL(input instanceof Request ? input.url : String(input));
      const method = init?.method ?? "GET";
      const kind =
        method === "GET" && url.pathname === "/v1/messages/pending"
          ? "poll"
          : /\/ack$/.test(url.pathname)
            ? "ack"
            : "send";
      const allowanceMs = kind === "poll" ? Number(url.searchParams.get("timeout") ?? 0) * 1000 : 0;
      const key = new Headers(init?.headers).get("idempotency-key");
      const rec = key === null ? undefined : w.byKey.get(key);
      const startedAt = Date.now();
      const seq = t.mark();
      if (kind === "poll") this.start(w); // a long poll waits at the node: it receives from its start
      const budget = AbortSignal.timeout(allowanceMs + HANG_MS);
      const attempt: Attempt = { startedAt, endedAt: startedAt, status: "error" };
      try {
        const res = await fetch(input, {
          ...init,
          signal: init?.signal ? AbortSignal.any([init.signal, budget]) : budget,
        });
        const text = await res.text();
        attempt.status = String(res.status);
        if (res.headers.get("idempotency-replayed") === "true") attempt.replayed = true;
        if (res.status === 503 && storedUnknown(text)) attempt.storedUnknown = true;
        if (kind === "poll") {
          if (res.status === 200) {
            this.up(w, startedAt);
            for (const m of (JSON.parse(text) as { messages: { id: string }[] }).messages) w.arrival.set(m.id, seq);
          } else this.down(w, Date.now());
        }
        if (kind === "ack" && res.status === 204) {
          const id = decodeURIComponent(url.pathname.split("/").at(-2) ?? "");
          this.acked(w, id, url.searchParams.get("through") === "true");
        }
        return new Response(res.status === 204 ? null : text, { status: res.status, headers: res.headers });
      } catch (err) {
        if (init?.signal?.aborted) {
          attempt.status = "aborted"; // the harness's stop (or the SDK's own abort): not the node's doing
          throw err;
        }
        attempt.status = errorStatus(err);
        if (kind === "poll") this.down(w, Date.now());
        throw err;
      } finally {
        attempt.endedAt = Date.now();
        if (attempt.status !== "aborted") t.request(kind, startedAt, attempt.status, allowanceMs);
        if (kind === "send") rec?.attempts.push(attempt);
      }
    };
  }

  /** The WebSocket class the SDK will construct: `ws`, with the frames watched (the agent is known by its token). */
  private socketClass(): unknown {
    const watch = (url: string, protocols: string[]) => this.watchSocket(new WebSocket(url, protocols), protocols);
    return class {
      constructor(url: string, protocols: string[]) {
        return watch(url, protocols);
      }
    };
  }

  /** Watches the frames of one of an agent's sockets (the agent is known by the token in its subprotocol). */
  private watchSocket(ws: WebSocket, protocols: string[]): WebSocket {
    const t = this.t;
    const token = protocols.find((p) => p.startsWith("bearer."))?.slice("bearer.".length);
    const w = token === undefined ? undefined : this.byToken.get(token);
    if (!w) return ws;
    const openedAt = Date.now();
    let ready = false;
    /** Refs of acks sent on this socket: what each acknowledges. */
    const refs = new Map<number, { id: string; through: boolean }>();
    const seen = new Set<string>();
    ws.on("message", (data: WebSocket.RawData) => {
      let f: { type?: string; ref?: unknown; id?: unknown; error?: unknown; message?: { id: string } };
      try {
        f = JSON.parse(String(data)) as typeof f;
      } catch {
        return;
      }
      if (f.type === "ready") {
        ready = true;
        t.request("ws-connect", openedAt, "ready");
        this.up(w, Date.now());
      } else if (f.type === "message" && f.message && !seen.has(f.message.id)) {
        seen.add(f.message.id); // the SDK takes the first copy on a socket and drops the rest
        w.arrival.set(f.message.id, t.mark());
      } else if (f.type === "ack" && typeof f.ref === "number") {
        const a = refs.get(f.ref);
        refs.delete(f.ref);
        if (a) this.acked(w, a.id, a.through);
      } else if (f.type === "error") {
        t.request(typeof f.ref === "number" ? "ws-ack" : "ws", Date.now(), `ws-${String(f.error)}`);
      }
    });
    ws.on("close", (code: number) => {
      if (this.stopping.signal.aborted) return;
      t.request("ws", openedAt, `close-${code}`, Number.POSITIVE_INFINITY);
      if (ready) this.down(w, Date.now());
    });
    ws.on("error", (err: Error) => {
      if (!ready && !this.stopping.signal.aborted) t.request("ws-connect", openedAt, errorStatus(err));
    });
    const send = ws.send.bind(ws);
    ws.send = ((data: string, ...rest: never[]) => {
      try {
        const f = JSON.parse(data) as { type?: string; id?: string; ref?: number; through?: boolean };
        if (f.type === "ack" && typeof f.ref === "number" && f.id)
          refs.set(f.ref, { id: f.id, through: f.through === true });
      } catch {
        // not JSON: not an ack
      }
      return send(data, ...rest);
    }) as typeof ws.send;
    return ws;
  }
}

function describe(err: unknown): string {
  const e = err as { name?: string; status?: number; code?: string; message?: string };
  return `${e?.name ?? "Error"}${e?.status ? ` ${e.status}` : ""}${e?.code ? ` ${e.code}` : ""}: ${e?.message ?? String(err)}`.slice(
    0,
    200,
  );
}
