// The same message iterator over the WebSocket: acks as frames, reconnects with backoff, and resumes without
// loss (the server sends every unacknowledged message again on connect). It uses the platform's WebSocket (browsers,
// Node 22+) and loads `ws` only where there is none (Node 18 and 20); the token travels as a `bearer.<token>`
// subprotocol, the one credential a browser WebSocket can carry.
import { AckBatch } from "./ack-batch.ts";
import type { Flock } from "./index.ts";
import type { MessageStreamOptions } from "./receive.ts";
import { reconnectDelayMs } from "./retry.ts";
import type { Message } from "./types.ts";

interface Frame {
  type: string;
  message?: Message;
  [k: string]: unknown;
}

/** What this module needs of a WebSocket: the standard browser interface, which `ws` implements too. */
interface Socket {
  readonly readyState: number;
  send(data: string): void;
  close(code?: number, reason?: string): void;
  addEventListener(type: "message", cb: (ev: { data: unknown }) => void): void;
  addEventListener(type: "close", cb: (ev: { code: number }) => void): void;
  addEventListener(type: "error", cb: () => void): void;
}
type SocketClass = new (url: string, protocols: string[]) => Socket;

const CONNECTING = 0;
const OPEN = 1;

let socketClass: Promise<SocketClass> | undefined;

/** The platform's WebSocket, or `ws` on a Node without one (bundlers for browsers never reach the import). */
function webSocket(): Promise<SocketClass> {
  const native = (globalThis as { WebSocket?: SocketClass }).WebSocket;
  if (native) return Promise.resolve(native);
  socketClass ??= import("ws").then((m) => m.WebSocket as unknown as SocketClass);
  return socketClass;
}

export function wsUrl(baseUrl: string): string {
  return `${baseUrl.replace(/^http/, "ws")}/v1/ws`;
}

export async function* wsMessageStream(flock: Flock, opts: MessageStreamOptions): AsyncGenerator<Message> {
  const Ws = await webSocket();
  let failures = 0;
  while (!opts.signal?.aborted) {
    const conn = connect(Ws, flock, opts.signal);
    // confirmed acks (each carries a ref, the server answers once it is final): a direct message is acknowledged
    // before the next message is taken, a group message with its batch (one cumulative ack per thread)
    const acks = new AckBatch((id, through) => conn.ack(id, through), flock.http.clock, opts.ackBatch);
    /** The message the loop body has: set while it is out, cleared once the loop asks for the next one. */
    let inHand: Message | undefined;
    try {
      for (;;) {
        const next = await conn.next();
        if (next === null) break; // closed: reconnect
        failures = 0;
        inHand = next;
        yield next;
        inHand = undefined;
        await acks.handled(next);
      }
    } finally {
      // the loop left (break, return, a throw) with a message: acknowledged unless `ackOnExit: false`; a stop right
      // after a handler still acknowledges what was handled
      if (inHand && opts.ackOnExit !== false) await acks.handled(inHand);
      await acks.flush();
      // wait for the close handshake (a second at most): once the loop is left, the server has let the socket go and
      // sends nothing more to it, so a message sent next is not handed to a socket nobody reads
      const bound = new AbortController();
      await Promise.race([conn.close(), flock.http.clock.sleep(1000, bound.signal).catch(() => {})]);
      bound.abort();
    }
    if (opts.signal?.aborted) return;
    if (conn.fatal) throw conn.fatal;
    // spread (from half to one and a half times the wait): a restarting node's clients do not all come back at once
    await flock.http.clock.sleep(reconnectDelayMs(failures++, Math.random), opts.signal).catch(() => {});
  }
}

interface Conn {
  next(): Promise<Message | null>;
  /** Acknowledge and wait for the server's answer (or the socket's end: the message then comes again). */
  ack(id: string, through: boolean): Promise<void>;
  /** Close the socket; settles when it is closed. */
  close(): Promise<void>;
  fatal: Error | undefined;
}

function text(data: unknown): string | undefined {
  if (typeof data === "string") return data;
  if (data instanceof ArrayBuffer || ArrayBuffer.isView(data)) return new TextDecoder().decode(data);
  return undefined; // a Blob: binary frames are not part of the JSON protocol
}

function connect(Ws: SocketClass, flock: Flock, signal: AbortSignal | undefined): Conn {
  const protocols = ["flock.json"];
  if (flock.token) protocols.push(`bearer.${flock.token}`);
  const ws = new Ws(wsUrl(flock.http.baseUrl), protocols);
  const queue: Message[] = [];
  const seen = new Set<string>();
  /** This connection's principal (from its ready frame). */
  let me: string | undefined;
  let waiter: ((m: Message | null) => void) | undefined;
  let closed = false;
  let refs = 0;
  /** Acks sent and not yet answered, by ref: resolved by the answer, an error frame naming the ref, or the close. */
  const acking = new Map<number, () => void>();
  /** Those waiting for the socket to close. */
  const closers: (() => void)[] = [];
  const conn: Conn = {
    fatal: undefined,
    next: () =>
      new Promise((resolve) => {
        if (signal?.aborted) return resolve(null);
        const m = queue.shift();
        if (m) resolve(m);
        else if (closed) resolve(null);
        else waiter = resolve;
      }),
    ack(id, through) {
      if (ws.readyState !== OPEN) return Promise.resolve();
      const ref = ++refs;
      return new Promise<void>((resolve) => {
        acking.set(ref, resolve);
        ws.send(JSON.stringify(through ? { type: "ack", id, through, ref } : { type: "ack", id, ref }));
      });
    },
    close() {
      signal?.removeEventListener("abort", onAbort);
      if (closed) return Promise.resolve();
      const done = new Promise<void>((resolve) => closers.push(resolve));
      if (ws.readyState === OPEN || ws.readyState === CONNECTING) ws.close(1000);
      return done;
    },
  };
  const finish = () => {
    closed = true;
    for (const done of closers.splice(0)) done();
    for (const done of acking.values()) done();
    acking.clear();
    const w = waiter;
    waiter = undefined;
    w?.(null);
  };
  const onAbort = () => {
    // a stop: no more messages are taken; an ack already under way is still answered before the socket closes
    const w = waiter;
    waiter = undefined;
    w?.(null);
  };
  signal?.addEventListener("abort", onAbort, { once: true });
  ws.addEventListener("message", (ev) => {
    let frame: Frame;
    try {
      frame = JSON.parse(text(ev.data) ?? "") as Frame;
    } catch {
      return;
    }
    if ((frame.type === "ack" || frame.type === "error") && typeof frame["ref"] === "number") {
      const done = acking.get(frame["ref"]);
      acking.delete(frame["ref"]);
      done?.();
      return;
    }
    if (frame.type === "ready") {
      const p = frame["principal"] as { id?: unknown } | undefined;
      if (typeof p?.id === "string") me = p.id;
      return;
    }
    if (frame.type !== "message" || !frame.message) return;
    if (seen.has(frame.message.id)) return; // a re-send within one connection
    // a group message goes to every member's sockets, the sender's own too: the sender has nothing to take or ack
    if (frame.message.from.id === me) return;
    seen.add(frame.message.id);
    const w = waiter;
    if (w) {
      waiter = undefined;
      w(frame.message);
    } else {
      queue.push(frame.message);
    }
  });
  ws.addEventListener("close", (ev) => {
    if (ev.code === 4401) conn.fatal = new Error("websocket closed: unauthorized (4401)");
    finish();
  });
  ws.addEventListener("error", () => finish());
  return conn;
}
