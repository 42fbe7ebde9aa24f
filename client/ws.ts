// The same message iterator over the WebSocket: acks as frames, reconnects with backoff, and resumes without
// loss (the server sends every unacknowledged message again on connect). It uses the platform's WebSocket (browsers,
// Node 22+) and loads `ws` only where there is none (Node 18 and 20); the token travels as a `bearer.<token>`
// subprotocol, the one credential a browser WebSocket can carry. It asks for lean message frames (`flock.json.lean`,
// then `flock.json` for a server without them) and fills in what they leave out (fullMessage), so either way its
// users get the same Message.
import { AckBatch } from "./ack-batch.ts";
import type { Flock } from "./index.ts";
import type { MessageStreamOptions } from "./receive.ts";
import { reconnectDelayMs } from "./retry.ts";
import type { Message } from "./types.ts";

interface Frame {
  type: string;
  message?: Record<string, unknown>;
  [k: string]: unknown;
}

/** The subprotocols asked for, in order: lean message frames, else full ones (a server without lean frames). */
const PROTOCOLS = ["flock.json.lean", "flock.json"];

type Obj = Record<string, unknown>;

/** An author with its `avatar_url` (null when a lean frame left it out). */
const author = (a: Obj): Obj => ("avatar_url" in a ? a : { ...a, avatar_url: null });

/**
 * The message a `message` frame carries, as a full frame has it: a lean frame's (the server's LeanMessage,
 * schema/ws.ts) filled in, with the fields in the full message's order; a full frame's as it is. `me` is the
 * receiver (the `ready` frame's principal), the `to` of a direct message.
 */
export function fullMessage(m: Obj, me: string | undefined): Message {
  // a lean frame leaves out one of the two (a full frame has both)
  if ("to" in m && "thread_id" in m) return m as unknown as Message;
  const to = m["to"] as string | undefined;
  const out: Obj = {
    id: m["id"],
    thread_id: m["thread_id"] ?? `thread_${(to ?? "").slice("group_".length)}`,
    from: author(m["from"] as Obj),
    to: to ?? me,
    body: m["body"],
    created_at: m["created_at"],
  };
  for (const k in m) {
    if (k in out || k === "delivery_count") continue;
    const v = m[k];
    if (k === "reply_to") out[k] = { ...(v as Obj), from: author((v as Obj)["from"] as Obj) };
    else if (k === "attachments") {
      out[k] = (v as Obj[]).map((a) => ("url" in a ? a : { ...a, url: `/v1/files/${a["id"] as string}` }));
    } else if (k === "payment") out[k] = "explorer_url" in (v as Obj) ? v : { ...(v as Obj), explorer_url: null };
    else out[k] = v;
  }
  out["delivery_count"] = m["delivery_count"] ?? 1;
  return out as unknown as Message;
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

/**
 * Returns "refused" when the first socket of the run never opened (an upgrade refused or dropped, e.g. by a proxy),
 * unless `fallback: false`: the live connection then takes Server-Sent Events (live.ts). Once a socket has opened,
 * it reconnects by itself, as before.
 */
export async function* wsMessageStream(
  flock: Flock,
  opts: MessageStreamOptions,
): AsyncGenerator<Message, "refused" | undefined> {
  const Ws = await webSocket();
  let failures = 0;
  let everOpened = false;
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
    if (opts.signal?.aborted) return undefined;
    if (conn.fatal) throw conn.fatal;
    everOpened ||= conn.opened;
    if (!everOpened && opts.fallback !== false) return "refused";
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
  /** It got its ready frame: the socket opened and authenticated. */
  opened: boolean;
}

function text(data: unknown): string | undefined {
  if (typeof data === "string") return data;
  if (data instanceof ArrayBuffer || ArrayBuffer.isView(data)) return new TextDecoder().decode(data);
  return undefined; // a Blob: binary frames are not part of the JSON protocol
}

function connect(Ws: SocketClass, flock: Flock, signal: AbortSignal | undefined): Conn {
  const protocols = [...PROTOCOLS];
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
    opened: false,
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
      conn.opened = true;
      const p = frame["principal"] as { id?: unknown } | undefined;
      if (typeof p?.id === "string") me = p.id;
      return;
    }
    if (frame.type !== "message" || !frame.message) return;
    const message = fullMessage(frame.message, me);
    if (seen.has(message.id)) return; // a re-send within one connection
    // a group message goes to every member's sockets, the sender's own too: the sender has nothing to take or ack
    if (message.from.id === me) return;
    seen.add(message.id);
    const w = waiter;
    if (w) {
      waiter = undefined;
      w(message);
    } else {
      queue.push(message);
    }
  });
  ws.addEventListener("close", (ev) => {
    if (ev.code === 4401) conn.fatal = new Error("websocket closed: unauthorized (4401)");
    finish();
  });
  ws.addEventListener("error", () => finish());
  return conn;
}
