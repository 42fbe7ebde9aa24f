// A parser of the event-stream format (text/event-stream, WHATWG HTML "Server-sent events"): bytes in, events out.
// Lines end with LF, CR LF or CR; a blank line dispatches the event gathered so far; a line starting with ":" is a
// comment; `id:` sets the last event id (kept across events, as an EventSource keeps it for its Last-Event-ID).

export interface StreamEvent {
  /** `event:`, "message" when none was given. */
  type: string;
  data: string;
  /** The last event id as of this event (this event's own `id:`, else an earlier one's). */
  lastId: string | undefined;
}

export class EventStreamParser {
  /** The last event id seen (an EventSource's "last event ID string"). */
  lastId: string | undefined;
  /** The reconnection time the server asked for (`retry:`, ms). */
  retry: number | undefined;
  private readonly decoder = new TextDecoder();
  private buf = "";
  private data: string[] = [];
  private type = "";
  private pendingId: string | undefined;

  constructor(lastId?: string) {
    this.lastId = lastId;
  }

  /** Feed bytes; answers the events they completed. */
  push(chunk: Uint8Array): StreamEvent[] {
    this.buf += this.decoder.decode(chunk, { stream: true });
    const out: StreamEvent[] = [];
    for (;;) {
      const nl = this.buf.search(/[\r\n]/);
      if (nl < 0) break;
      // a CR at the very end may be the first half of a CR LF still to come
      if (this.buf[nl] === "\r" && nl === this.buf.length - 1) break;
      const line = this.buf.slice(0, nl);
      this.buf = this.buf.slice(nl + (this.buf[nl] === "\r" && this.buf[nl + 1] === "\n" ? 2 : 1));
      const e = this.line(line);
      if (e !== undefined) out.push(e);
    }
    return out;
  }

  private line(line: string): StreamEvent | undefined {
    if (line === "") {
      if (this.pendingId !== undefined) this.lastId = this.pendingId;
      this.pendingId = undefined;
      const data = this.data;
      const type = this.type || "message";
      this.data = [];
      this.type = "";
      return data.length === 0 ? undefined : { type, data: data.join("\n"), lastId: this.lastId };
    }
    if (line.startsWith(":")) return undefined;
    const colon = line.indexOf(":");
    const field = colon < 0 ? line : line.slice(0, colon);
    let value = colon < 0 ? "" : line.slice(colon + 1);
    if (value.startsWith(" ")) value = value.slice(1);
    if (field === "data") this.data.push(value);
    else if (field === "event") this.type = value;
    else if (field === "id" && !value.includes("\0")) this.pendingId = value;
    else if (field === "retry" && /^\d+$/.test(value)) this.retry = Number(value);
    return undefined;
  }
}
