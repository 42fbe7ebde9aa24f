// Between scenarios: wait until the node has worked off what the last one left queued (the sends and acks its
// batchers hold, read from its /metrics), so that each scenario's latencies are its own. A scenario can end with tens
// of thousands of acks still queued (group: 999 WebSocket acks per send, arriving faster than one batch at a time
// commits them), and the next one's acks would wait behind them.
import { promLabelled, promValues } from "./sampler.ts";

/** What the node still held when the wait began, and how long the wait took. */
export interface Settled {
  ms: number;
  acks: number;
  sends: number;
  /** False when the queues were still not empty at the time limit. */
  empty: boolean;
}

/** The node's send and ack queues (flock_send_queue_depth by kind, flock_ack_queue_depth). */
async function queued(url: string, token: string): Promise<{ acks: number; sends: number }> {
  const r = await fetch(`${url}/metrics`, {
    headers: { authorization: `Bearer ${token}` },
    signal: AbortSignal.timeout(5000),
  });
  if (r.status !== 200) throw new Error(`GET /metrics answered ${r.status}`);
  const text = await r.text();
  const acks = promValues(text, ["flock_ack_queue_depth"])["flock_ack_queue_depth"] ?? NaN;
  const sends =
    promLabelled(text, "flock_send_queue_depth", "kind", "direct") +
    promLabelled(text, "flock_send_queue_depth", "kind", "group");
  if (Number.isNaN(acks) || Number.isNaN(sends)) throw new Error("/metrics has no flock_ack_queue_depth or send depth");
  return { acks, sends };
}

/**
 * Waits (reading every 100 ms, at most `limitMs`) until the node at `url` holds no queued sends or acks.
 * @example
 * ```ts
 * const s = await settle(url, metricsToken);
 * if (s.acks > 0) progress(`waited ${s.ms} ms for ${s.acks} acks the last scenario left`);
 * ```
 */
export async function settle(url: string, token: string, limitMs = 120_000): Promise<Settled> {
  const t0 = performance.now();
  const first = await queued(url, token);
  let now = first;
  while (now.acks + now.sends > 0 && performance.now() - t0 < limitMs) {
    await new Promise((r) => setTimeout(r, 100));
    now = await queued(url, token);
  }
  return { ms: Math.round(performance.now() - t0), ...first, empty: now.acks + now.sends === 0 };
}
