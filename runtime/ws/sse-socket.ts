// A Server-Sent Events response seen as the socket a WebSocket session writes to (runtime/ws/session.ts, Socket), so
// an event stream is delivered by the same session, catch-up, channels and realtime relays as a WebSocket: each
// server frame becomes one event (`event: <frame type>`, `data: <frame JSON>`; a message frame's `id:` is the
// message's id, docs/ARCHITECTURE.md "Server-Sent Events"). The bytes go into a Readable that the HTTP layer writes
// with backpressure (runtime/http/send-chunked.ts): what it holds is the session's buffered amount, so a catch-up
// pauses above HIGH_WATER and resumes when the client reads (the Readable's read), and past MAX_BUFFER the stream
// is cut as a slow consumer, as a WebSocket is closed.
import { Readable } from "node:stream";
import { WS_CLOSE } from "../../schema/ws.ts";
import type { LocalTopics, TopicSubscriber } from "./local-topics.ts";
import { HIGH_WATER, MAX_BUFFER, type Socket } from "./session.ts";

/** What the socket tells its session (set once the session is made). */
export interface SseSessionHooks {
  onDrain(): void;
  onClose(): void;
}

const TYPE = /^\{"type":"([a-z_]+)"/;
const MESSAGE_ID = /^\{"type":"message","message":\{"id":"([^"]+)"/;

/** One server frame (JSON text) as one event; a message frame carries its message's id as the event id. */
export function sseEvent(json: string): string {
  const type = TYPE.exec(json)?.[1] ?? (JSON.parse(json) as { type?: string }).type ?? "frame";
  const id = type === "message" ? MESSAGE_ID.exec(json)?.[1] : undefined;
  // JSON text has no raw line break; were one there, each line is a data line of its own (the client joins them)
  const data = json.includes("\n") ? json.split(/\r?\n/).join("\ndata: ") : json;
  return `${id === undefined ? "" : `id: ${id}\n`}event: ${type}\ndata: ${data}\n\n`;
}

const asText = (data: string | Uint8Array): string =>
  typeof data === "string" ? data : Buffer.from(data.buffer, data.byteOffset, data.byteLength).toString("utf8");

export class SseSocket implements Socket, TopicSubscriber {
  /** The response body: the HTTP layer reads it as the client takes it. */
  readonly body: Readable;
  hooks: SseSessionHooks | undefined;
  private ended = false;
  /** A cork's writes, pushed as one chunk when it ends. */
  private batch: string[] | undefined;
  private batchBytes = 0;
  private readonly topics = new Set<string>();

  constructor(
    private readonly local: LocalTopics,
    /** The reconnection delay the client is told (`retry:`), ms. */
    retryMs: number,
  ) {
    this.body = new Readable({ highWaterMark: HIGH_WATER, read: () => this.hooks?.onDrain() });
    this.body.on("close", () => {
      this.ended = true;
      this.dropTopics();
      this.hooks?.onClose();
    });
    this.body.push(`retry: ${retryMs}\n\n`);
  }

  get closed(): boolean {
    return this.ended;
  }

  /** 1 written, 0 written but the client is behind, 2 not written (gone, or cut as a slow consumer). */
  send(data: string | Uint8Array): number {
    if (this.ended) return 2;
    const event = sseEvent(asText(data));
    if (this.batch !== undefined) {
      this.batch.push(event);
      this.batchBytes += event.length;
    } else this.body.push(event);
    if (this.getBufferedAmount() > MAX_BUFFER) {
      this.end(WS_CLOSE.slowConsumer, "slow consumer");
      return 2;
    }
    return this.body.readableLength < HIGH_WATER ? 1 : 0;
  }

  /** A comment line: keeps proxies from closing an idle stream (the client ignores it). */
  ping(): void {
    this.comment("ping");
  }

  comment(text: string): void {
    if (!this.ended) this.body.push(`: ${text.replace(/[\r\n]/g, " ")}\n\n`);
  }

  subscribe(topic: string): boolean {
    if (this.ended || !this.local.subscribe(topic, this)) return false;
    this.topics.add(topic);
    return true;
  }

  unsubscribe(topic: string): boolean {
    this.topics.delete(topic);
    return this.local.unsubscribe(topic, this);
  }

  getBufferedAmount(): number {
    return this.ended ? 0 : this.body.readableLength + this.batchBytes;
  }

  /**
   * End the stream: a last `close` event says why (its code is the WebSocket's close code for the same cause), then
   * the body ends. A slow consumer is cut instead: what it has not read would never drain.
   */
  end(code?: number, reason?: string): void {
    if (this.ended) return;
    this.flush();
    this.ended = true;
    this.dropTopics();
    if (code === WS_CLOSE.slowConsumer) {
      this.body.destroy(new Error("slow consumer"));
      return;
    }
    this.body.push(`event: close\ndata: ${JSON.stringify({ code: code ?? 1000, reason: reason ?? "" })}\n\n`);
    this.body.push(null);
  }

  cork(cb: () => void): void {
    if (this.batch !== undefined) return cb();
    this.batch = [];
    try {
      cb();
    } finally {
      this.flush();
    }
  }

  private flush(): void {
    const b = this.batch;
    this.batch = undefined;
    this.batchBytes = 0;
    if (b !== undefined && b.length > 0 && !this.ended) this.body.push(b.join(""));
  }

  private dropTopics(): void {
    for (const t of this.topics) this.local.unsubscribe(t, this);
    this.topics.clear();
  }
}
