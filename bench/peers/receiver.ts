// One receiver process of the fan-out bench: holds its share of the members' WebSocket connections to one server,
// parses every frame it gets (as a real client would), acks Flock's messages as told, and reports, per step, a
// latency histogram, how many members got each message within 1 s, and its own CPU time. Driven by IPC from
// bench/peers/run.ts; several of these run at once so the clients are not the bottleneck.
import WebSocket from "ws";
import { AckBatch } from "../../client/ack-batch.ts";
import { realClock } from "../../client/throttle.ts";
import { fullMessage } from "../../client/ws.ts";
import { type AckMode, type Command, HIST_BUCKETS, HIST_RES_MS, type Report, type Target } from "./protocol.ts";

/** The little of socket.io-client's socket used here (the package lives in the peers folder, not ours). */
interface SioSocket {
  on(event: string, fn: (...args: never[]) => void): void;
  once(event: string, fn: (...args: never[]) => void): void;
  disconnect(): void;
}

const now = () => performance.timeOrigin + performance.now();

let hist = new Uint32Array(HIST_BUCKETS);
let within = new Map<number, number>();
let frames = 0;
let cpuAt = process.cpuUsage();
const closers: (() => void)[] = [];

/** Counts one payload: `{"seq":N,"t":ms,...}` as the publisher stamped it. */
function got(payload: string): void {
  const p = JSON.parse(payload) as { seq: number; t: number };
  const ms = now() - p.t;
  hist[Math.min(HIST_BUCKETS - 1, Math.max(0, Math.floor(ms / HIST_RES_MS)))]!++;
  if (ms <= 1000) within.set(p.seq, (within.get(p.seq) ?? 0) + 1);
  frames++;
}

function opened(
  sock: WebSocket,
  readyWhen: (frame: Record<string, unknown>) => boolean,
  onFrame: (frame: Record<string, unknown>) => void,
): Promise<void> {
  return new Promise((resolve, reject) => {
    let ready = false;
    const timer = setTimeout(() => reject(new Error("connect timed out")), 30_000);
    sock.on("message", (data) => {
      const frame = JSON.parse(data.toString()) as Record<string, unknown>;
      if (!ready && readyWhen(frame)) {
        ready = true;
        clearTimeout(timer);
        resolve();
        return;
      }
      if (ready) onFrame(frame);
    });
    sock.on("error", (e) => {
      clearTimeout(timer);
      reject(e);
    });
    sock.on("close", () => {
      if (!ready) reject(new Error("closed before ready"));
    });
  });
}

/**
 * Flock: a message frame's body is the payload; acks follow the mode: each message on its own, or in batches by the
 * SDK's own batcher (client/ack-batch.ts: one ack per `batch.messages` handled or `batch.ms` after the first of a
 * batch, cumulative when it holds more than one message of the thread), or none.
 */
async function flock(t: Target, ack: AckMode, batch: { ms: number; messages: number }): Promise<void> {
  // lean message frames, as the SDK asks for them, rebuilt into the full message as the SDK does (fullMessage)
  const sock = new WebSocket(t.url, ["flock.json.lean", "flock.json"], {
    headers: { authorization: `Bearer ${t.token}` },
  });
  let me: string | undefined;
  closers.push(() => sock.terminate());
  const acks =
    ack === "none"
      ? null
      : new AckBatch(
          async (id, through) => {
            if (sock.readyState === WebSocket.OPEN)
              sock.send(JSON.stringify(through ? { type: "ack", id, through } : { type: "ack", id }));
          },
          realClock,
          ack === "each" ? { messages: 1 } : batch,
        );
  await opened(
    sock,
    (f) => f["type"] === "ready",
    (f) => {
      if (f["type"] === "ready") me = (f["principal"] as { id?: string } | undefined)?.id;
      if (f["type"] !== "message") return;
      const m = fullMessage(f["message"] as Record<string, unknown>, me);
      got(m.body);
      void acks?.handled(m);
    },
  );
}

/** Bare uWS: the frame is the payload. */
async function uws(t: Target): Promise<void> {
  const sock = new WebSocket(t.url);
  closers.push(() => sock.terminate());
  await new Promise<void>((resolve, reject) => {
    sock.once("open", () => resolve());
    sock.once("error", reject);
  });
  sock.on("message", (data) => got(data.toString()));
}

/** Soketi (Pusher protocol): subscribe to the channel; an event's data is the payload. */
async function soketi(t: Target): Promise<void> {
  const sock = new WebSocket(t.url);
  closers.push(() => sock.terminate());
  let subscribed = false;
  sock.on("open", () => sock.send(JSON.stringify({ event: "pusher:subscribe", data: { channel: "all" } })));
  await opened(
    sock,
    (f) => {
      subscribed ||= f["event"] === "pusher_internal:subscription_succeeded";
      return subscribed;
    },
    (f) => {
      if (f["event"] === "m") got(f["data"] as string);
    },
  );
}

/** Socket.IO: the server puts every socket in one room; an "m" event carries the payload. */
async function socketio(t: Target): Promise<void> {
  const { io } = (await import(t.module!)) as { io: (url: string, opts: object) => SioSocket };
  const sock = io(t.url, { transports: ["websocket"], reconnection: false });
  closers.push(() => sock.disconnect());
  sock.on("m", (payload: string) => got(payload));
  await new Promise<void>((resolve, reject) => {
    sock.once("joined", () => resolve());
    sock.once("connect_error", reject);
  });
}

async function connectAll(targets: Target[], ack: AckMode, batch: { ms: number; messages: number }): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: 16 }, async () => {
      while (next < targets.length) {
        const t = targets[next++]!;
        if (t.kind === "flock") await flock(t, ack, batch);
        else if (t.kind === "uws") await uws(t);
        else if (t.kind === "soketi") await soketi(t);
        else await socketio(t);
      }
    }),
  );
}

function report(): Report {
  const cpu = process.cpuUsage(cpuAt);
  const r: Report = {
    type: "report",
    hist: [...hist.entries()].filter(([, n]) => n > 0),
    within: [...within.entries()],
    frames,
    cpuMs: (cpu.user + cpu.system) / 1000,
  };
  hist = new Uint32Array(HIST_BUCKETS);
  within = new Map();
  frames = 0;
  cpuAt = process.cpuUsage();
  return r;
}

process.on("message", (cmd: Command) => {
  if (cmd.type === "connect") {
    connectAll(cmd.targets, cmd.ack, { ms: cmd.ackMs, messages: cmd.ackMessages }).then(
      () => process.send!({ type: "connected", n: cmd.targets.length }),
      (err: Error) => process.send!({ type: "failed", error: err.message }),
    );
  } else if (cmd.type === "report") {
    process.send!(report());
  } else if (cmd.type === "close") {
    for (const c of closers) c();
    process.exit(0);
  }
});
