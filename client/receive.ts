// Receiving: long polling (the default) or a live connection (the WebSocket, falling back to Server-Sent Events and
// then to long polling: live.ts), as one async iterator with ack-after-handling.
import { AckBatch, type AckBatchOptions } from "./ack-batch.ts";
import { FlockNetworkError } from "./errors.ts";
import type { Flock } from "./index.ts";
import type { Message } from "./types.ts";

export interface MessageStreamOptions {
  /** Long-poll timeout in seconds (default 25; never 0 in a loop). */
  timeout?: number;
  /** Messages per poll (default 50). */
  limit?: number;
  /**
   * "poll" (the default), "ws": the WebSocket, and when its upgrade is refused or dropped (a proxy), Server-Sent
   * Events, and when the server has none, long polling; "sse": Server-Sent Events first.
   */
  transport?: "poll" | "ws" | "sse";
  /** Whether a live transport falls back (default true); false: the WebSocket only, reconnecting as it can. */
  fallback?: boolean;
  signal?: AbortSignal;
  /**
   * How group messages are acknowledged: in batches, with one cumulative ack per thread (default: every 100
   * messages or 1 s over the WebSocket, once per poll's batch when polling; `{ messages: 1 }` acks each on its
   * own). Direct messages are always acknowledged one by one. A message whose handler threw is never acknowledged,
   * and neither is anything after it.
   */
  ackBatch?: AckBatchOptions;
  /**
   * Leaving the loop (`break`, `return`, or a throw) acknowledges the message the loop body had (default true): the
   * body was done with it. JavaScript tells an iterator only that its loop ended, never whether by `break` or by a
   * throw, so `false` leaves that message unacknowledged whichever way the loop ended (it comes again, with a higher
   * `delivery_count`); what the loop finished before it is acknowledged either way.
   */
  ackOnExit?: boolean;
}

/**
 * Polls, yields each message, and acknowledges it when the consumer asks for the next one or leaves the loop (group
 * messages in one cumulative ack per thread at the end of the poll's batch); with `ackOnExit: false` a message the
 * loop was left with is not acknowledged, so the server hands it out again. Only after the whole batch is handled
 * and acknowledged does it poll again, because a poll answers every unacknowledged message first.
 */
export async function* messageStream(flock: Flock, opts: MessageStreamOptions = {}): AsyncGenerator<Message> {
  if (opts.transport === "ws" || opts.transport === "sse") {
    const { liveMessageStream } = await import("./live.ts");
    // "poll": neither a WebSocket nor an event stream could be had: long polling, below
    if ((yield* liveMessageStream(flock, opts)) !== "poll") return;
  }
  const timeout = Math.min(30, Math.max(1, opts.timeout ?? 25));
  const limit = opts.limit ?? 50;
  let failures = 0;
  /** Batches in a row whose acks failed (a poll that works does not end the run: the acks are what fails). */
  let ackFailures = 0;
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
    // acks do not take the signal: a loop stopped after a handler still acknowledges what it finished (as over the
    // WebSocket); the signal ends the long poll
    const acks = new AckBatch((id, through) => flock.ack(id, { through }), flock.http.clock, {
      ...opts.ackBatch,
      ms: null,
    });
    /** The message the loop body has: set while it is out, cleared once the loop asks for the next one. */
    let inHand: Message | undefined;
    try {
      for (const msg of batch) {
        inHand = msg;
        yield msg;
        inHand = undefined;
        await acks.handled(msg);
      }
      await acks.flush();
      ackFailures = 0;
    } catch (err) {
      if (!isTransient(err)) throw err;
      // an ack failed after its retries: what was not acknowledged comes again next poll, which waits as after a
      // failed poll (at once, it would be answered the same messages again and again while the node refuses)
      await flock.http.clock.sleep(Math.min(30_000, 1000 * 2 ** ackFailures++), opts.signal).catch(() => {});
    } finally {
      // the loop was left (break, return, a throw) in the middle of a batch: the message it had, unless told
      // otherwise, and what it handled before are still acknowledged
      if (inHand && opts.ackOnExit !== false) await acks.handled(inHand).catch(() => {});
      await acks.flush().catch(() => {});
    }
  }
}

/** Network failures and 5xx answers are worth waiting out; anything else is the caller's problem. */
export function isTransient(err: unknown): boolean {
  if (err instanceof FlockNetworkError) return err.retryable; // refused, reset, timed out (not a bad URL or host)
  if (err instanceof TypeError) return true; // a custom fetch's connection failure
  const status = (err as { status?: number }).status;
  return status !== undefined && status >= 500;
}
