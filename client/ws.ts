// The same message iterator over the WebSocket: acks as frames, reconnects with backoff, and resumes without
// loss (the server sends every unacknowledged message again on connect).
import WebSocket from "ws";
import type { Flock } from "./index.ts";
import type { MessageStreamOptions } from "./receive.ts";
import type { Message } from "./types.ts";

interface Frame {
  type: string;
  message?: Message;
  [k: string]: unknown;
}

export function wsUrl(baseUrl: string): string {
  return `${baseUrl.replace(/^http/, "ws")}/v1/ws`;
}

export async function* wsMessageStream(flock: Flock, opts: MessageStreamOptions): AsyncGenerator<Message> {
  let failures = 0;
  while (!opts.signal?.aborted) {
    const conn = connect(flock, opts.signal);
    try {
      for (;;) {
        const next = await conn.next();
        if (next === null) break; // closed: reconnect
        failures = 0;
        yield next;
        conn.send({ type: "ack", id: next.id });
      }
    } finally {
      conn.close();
    }
    if (opts.signal?.aborted) return;
    if (conn.fatal) throw conn.fatal;
    await flock.http.clock.sleep(Math.min(30_000, 250 * 2 ** failures++), opts.signal).catch(() => {});
  }
}

interface Conn {
  next(): Promise<Message | null>;
  send(frame: object): void;
  close(): void;
  fatal: Error | undefined;
}

function connect(flock: Flock, signal: AbortSignal | undefined): Conn {
  const headers: Record<string, string> = {};
  if (flock.token) headers["authorization"] = `Bearer ${flock.token}`;
  const ws = new WebSocket(wsUrl(flock.http.baseUrl), ["flock.json"], { headers });
  const queue: Message[] = [];
  const seen = new Set<string>();
  let waiter: ((m: Message | null) => void) | undefined;
  let closed = false;
  const conn: Conn = {
    fatal: undefined,
    next: () =>
      new Promise((resolve) => {
        const m = queue.shift();
        if (m) resolve(m);
        else if (closed) resolve(null);
        else waiter = resolve;
      }),
    send(frame) {
      if (ws.readyState === WebSocket.OPEN) ws.send(JSON.stringify(frame));
    },
    close() {
      signal?.removeEventListener("abort", onAbort);
      if (ws.readyState === WebSocket.OPEN || ws.readyState === WebSocket.CONNECTING) ws.terminate();
    },
  };
  const finish = () => {
    closed = true;
    const w = waiter;
    waiter = undefined;
    w?.(null);
  };
  const onAbort = () => {
    ws.terminate();
    finish();
  };
  signal?.addEventListener("abort", onAbort, { once: true });
  ws.on("message", (data) => {
    let frame: Frame;
    try {
      frame = JSON.parse(data.toString()) as Frame;
    } catch {
      return;
    }
    if (frame.type !== "message" || !frame.message) return;
    if (seen.has(frame.message.id)) return; // a re-send within one connection
    seen.add(frame.message.id);
    const w = waiter;
    if (w) {
      waiter = undefined;
      w(frame.message);
    } else {
      queue.push(frame.message);
    }
  });
  ws.on("close", (code) => {
    if (code === 4401) conn.fatal = new Error("websocket closed: unauthorized (4401)");
    finish();
  });
  ws.on("error", () => finish());
  return conn;
}
