// The message iterator over Server-Sent Events (GET /v1/events): what the SDK's live connection falls back to when a
// WebSocket cannot be opened (a proxy that refuses or drops the upgrade). A fetch with a streaming body (so the
// token goes in the Authorization header, never the URL), the event stream parsed as it comes (event-stream.ts),
// acks over HTTP, and a reconnect with Last-Event-ID after the stream ends: every message not acknowledged comes
// again, so nothing is lost.
import { AckBatch } from "./ack-batch.ts";
import { FlockNetworkError } from "./errors.ts";
import { EventStreamParser } from "./event-stream.ts";
import type { Flock } from "./index.ts";
import type { MessageStreamOptions } from "./receive.ts";
import { reconnectDelayMs } from "./retry.ts";
import type { Message } from "./types.ts";
import { fullMessage } from "./ws.ts";

/** How an event stream could not be had: the server answered that it has none (an older one), or was unreachable. */
export type SseOutcome = "unsupported" | "unreachable";

/** Statuses meaning "no event stream here": the live connection takes long polling instead. */
const UNSUPPORTED = new Set([400, 404, 405, 406, 501]);

/**
 * Yields each message of the event stream, acknowledging it as the WebSocket iterator does. Returns (without
 * throwing) when the first stream cannot be opened: "unsupported" (the server has no event stream) or "unreachable"
 * (a network failure or 5xx before any stream opened), for the caller to choose what next; once one has opened it
 * reconnects by itself. A 401 or 403 throws.
 */
export async function* sseMessageStream(
  flock: Flock,
  opts: MessageStreamOptions,
): AsyncGenerator<Message, SseOutcome | undefined> {
  let failures = 0;
  let opened = false;
  let lastId: string | undefined;
  while (!opts.signal?.aborted) {
    const stop = new AbortController();
    const onAbort = () => stop.abort();
    opts.signal?.addEventListener("abort", onAbort, { once: true });
    let res: Response | undefined;
    try {
      res = await flock.http.raw("GET", "/v1/events", {
        signal: stop.signal,
        headers: { accept: "text/event-stream", ...(lastId !== undefined ? { "last-event-id": lastId } : {}) },
      });
    } catch (err) {
      opts.signal?.removeEventListener("abort", onAbort);
      if (opts.signal?.aborted) return undefined;
      if (!(err instanceof FlockNetworkError) && !(err instanceof TypeError)) throw err;
      if (!opened) return "unreachable";
    }
    if (res !== undefined && res.ok && res.body) {
      opened = true;
      const acks = new AckBatch((id, through) => flock.ack(id, { through }), flock.http.clock, opts.ackBatch);
      const parser = new EventStreamParser(lastId);
      const reader = res.body.getReader();
      /** This stream's principal (its ready event), the messages it gave, and the one the loop body has. */
      let me: string | undefined;
      const seen = new Set<string>();
      let inHand: Message | undefined;
      let fatal: Error | undefined;
      try {
        for (;;) {
          const chunk = await reader.read().catch(() => ({ done: true as const, value: undefined }));
          if (chunk.done) break;
          for (const e of parser.push(chunk.value)) {
            if (e.type === "ready") {
              me = (JSON.parse(e.data) as { principal?: { id?: string } }).principal?.id;
              failures = 0;
            } else if (e.type === "close") {
              const code = (JSON.parse(e.data) as { code?: number }).code;
              if (code === 4401 || code === 4403) fatal = new Error(`event stream closed: unauthorized (${code})`);
            } else if (e.type === "message") {
              const m = fullMessage((JSON.parse(e.data) as { message: Record<string, unknown> }).message, me);
              // a group message reaches its sender's streams too: nothing to take or ack
              if (seen.has(m.id) || m.from.id === me) continue;
              seen.add(m.id);
              inHand = m;
              yield m;
              inHand = undefined;
              await acks.handled(m);
            }
          }
          lastId = parser.lastId;
        }
      } finally {
        if (inHand && opts.ackOnExit !== false) await acks.handled(inHand).catch(() => {});
        await acks.flush().catch(() => {});
        stop.abort();
        opts.signal?.removeEventListener("abort", onAbort);
      }
      if (fatal) throw fatal;
    } else if (res !== undefined) {
      opts.signal?.removeEventListener("abort", onAbort);
      await res.body?.cancel().catch(() => {});
      if (res.status === 401 || res.status === 403) throw new Error(`event stream refused: ${res.status}`);
      if (!opened) return UNSUPPORTED.has(res.status) ? "unsupported" : "unreachable";
    }
    if (opts.signal?.aborted) return undefined;
    await flock.http.clock.sleep(reconnectDelayMs(failures++, Math.random), opts.signal).catch(() => {});
  }
  return undefined;
}
