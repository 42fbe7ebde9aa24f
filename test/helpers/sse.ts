// A Server-Sent Events reader for tests: fetch with a streaming body, its bytes parsed by the event-stream rules
// (WHATWG HTML, "Server-sent events": fields, comments, blank-line dispatch), kept apart from the SDK's own parser so
// that each checks the other. Waits go through until(); nothing sleeps.
import { until } from "./wait.ts";

export interface SseEvent {
  event: string;
  data: string;
  id: string | undefined;
}

export class SseReader {
  readonly events: SseEvent[] = [];
  readonly comments: string[] = [];
  retry: number | undefined;
  ended = false;
  /** The last id seen (what an EventSource sends as Last-Event-ID). */
  lastId: string | undefined;
  private taken = 0;

  private constructor(
    readonly res: Response,
    private readonly abort: AbortController,
  ) {}

  static async open(url: string, headers: Record<string, string> = {}): Promise<SseReader> {
    const abort = new AbortController();
    const res = await fetch(url, { headers: { Accept: "text/event-stream", ...headers }, signal: abort.signal });
    const r = new SseReader(res, abort);
    if (res.ok && res.body) void r.pump(res.body);
    return r;
  }

  private async pump(body: ReadableStream<Uint8Array>): Promise<void> {
    const decoder = new TextDecoder();
    let buf = "";
    let data: string[] = [];
    let event = "";
    let id: string | undefined;
    try {
      for await (const chunk of body) {
        buf += decoder.decode(chunk, { stream: true });
        let nl: number;
        while ((nl = buf.search(/\r\n|\r|\n/)) >= 0) {
          const line = buf.slice(0, nl);
          buf = buf.slice(nl + (buf.startsWith("\r\n", nl) ? 2 : 1));
          if (line === "") {
            if (data.length > 0) {
              this.lastId = id ?? this.lastId;
              this.events.push({ event: event || "message", data: data.join("\n"), id });
            }
            data = [];
            event = "";
            id = undefined;
            continue;
          }
          if (line.startsWith(":")) {
            this.comments.push(line.slice(1).trim());
            continue;
          }
          const colon = line.indexOf(":");
          const field = colon < 0 ? line : line.slice(0, colon);
          const value = colon < 0 ? "" : line.slice(colon + 1).replace(/^ /, "");
          if (field === "data") data.push(value);
          else if (field === "event") event = value;
          else if (field === "id") id = value;
          else if (field === "retry") this.retry = Number(value);
        }
      }
    } catch {
      // aborted by close()
    }
    this.ended = true;
  }

  /** The next event not taken yet of `type` (others before it are passed over), as parsed JSON. */
  async next<T = Record<string, unknown>>(type: string, ms = 10_000): Promise<T & { _id: string | undefined }> {
    let found: SseEvent | undefined;
    await until(
      () => {
        for (let i = this.taken; i < this.events.length; i++) {
          if (this.events[i]!.event === type) {
            found = this.events[i];
            this.taken = i + 1;
            return true;
          }
        }
        return false;
      },
      { ms, what: `an SSE "${type}" event` },
    );
    return { ...(JSON.parse(found!.data) as T), _id: found!.id };
  }

  /** Every event of `type` seen so far. */
  all(type: string): SseEvent[] {
    return this.events.filter((e) => e.event === type);
  }

  close(): void {
    this.abort.abort();
  }
}
