// Receiving: long polling (the default) or the WebSocket, as one async iterator with ack-after-handling.
import type { Flock } from "./index.ts";
import type { Message } from "./types.ts";

export interface MessageStreamOptions {
  /** Long-poll timeout in seconds (default 25; never 0 in a loop). */
  timeout?: number;
  /** Messages per poll (default 50). */
  limit?: number;
  transport?: "poll" | "ws";
  signal?: AbortSignal;
}

/**
 * Polls, yields each message, and acknowledges it when the consumer asks for the next one (the loop body
 * finished without throwing). A message whose loop body threw is left unacknowledged, so the server hands it
 * out again. Only after the whole batch is handled does it poll again, because a poll answers every
 * unacknowledged message first.
 */
export async function* messageStream(flock: Flock, opts: MessageStreamOptions = {}): AsyncGenerator<Message> {
  if (opts.transport === "ws") {
    const { wsMessageStream } = await import("./ws.ts");
    yield* wsMessageStream(flock, opts);
    return;
  }
  const timeout = Math.min(30, Math.max(1, opts.timeout ?? 25));
  const limit = opts.limit ?? 50;
  let failures = 0;
  while (!opts.signal?.aborted) {
    let batch: Message[];
    try {
      batch = await flock.pending({ timeout, limit }, { signal: opts.signal });
      failures = 0;
    } catch (err) {
      if (opts.signal?.aborted) return;
      if (!isTransient(err)) throw err;
      // the server is restarting or unreachable: back off (1, 2, 4 ... 30 s) and poll again
      await flock.http.clock.sleep(Math.min(30_000, 1000 * 2 ** failures++), opts.signal).catch(() => {});
      continue;
    }
    for (const msg of batch) {
      yield msg;
      try {
        await flock.ack(msg.id, { signal: opts.signal });
      } catch (err) {
        if (opts.signal?.aborted) return; // not acknowledged: it comes again next time
        if (!isTransient(err)) throw err;
      }
    }
  }
}

/** Network failures and 5xx answers are worth waiting out; anything else is the caller's problem. */
export function isTransient(err: unknown): boolean {
  if (err instanceof TypeError) return true; // fetch: connection refused / reset
  const status = (err as { status?: number }).status;
  return status !== undefined && status >= 500;
}
