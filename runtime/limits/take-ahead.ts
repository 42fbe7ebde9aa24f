// Takes from a shared token bucket without waiting for the shared engine while the bucket is far from empty (Redis:
// runtime/scripts/take-1.lua). A node keeps, per bucket, what the engine last answered, less what the node took
// since, refilled at the bucket's rate. While that leaves more than MARGIN tokens the take is answered from it at once
// and sent to the engine behind the answer (its reply updates the node's figure); near empty, or with no figure, the
// take waits for the engine as before, so a bucket refuses exactly when the engine says so. What another node took
// meanwhile is learnt from the next reply: a client spread over nodes can pass its limit by the takes of one round
// trip, never more. A take sent behind an answer that fails forgets the figure (the next take waits).
import type { LimitsEngine, TakeResult } from "../engines/limits.ts";

/** Tokens that must be left, after a take, for it to be answered without the engine. */
const MARGIN = 2;
/** Buckets a node keeps figures for; past it, they are all forgotten (each next take waits once). */
const MAX_BUCKETS = 100_000;

interface Figure {
  /** Tokens left, as of `at` (ms). */
  tokens: number;
  at: number;
  /** Takes sent to the engine and not answered yet (already taken from `tokens`). */
  pending: number;
}

export class TakeAhead {
  private readonly figures = new Map<string, Figure>();

  constructor(private readonly engine: LimitsEngine) {}

  /** As LimitsEngine.take of one token, answered at once while the bucket is far from empty. */
  take(key: string, capacity: number, windowMs: number, nowMs: number): TakeResult | Promise<TakeResult> {
    const rate = capacity / windowMs;
    const f = this.figures.get(key) ?? this.unknown(key, nowMs);
    const tokens = Math.min(capacity, f.tokens + Math.max(0, nowMs - f.at) * rate) - 1;
    f.pending++;
    const sent = this.engine.take(key, capacity, windowMs, nowMs).then(
      (r) => {
        this.learn(key, r, f, nowMs);
        return r;
      },
      (err: unknown) => {
        f.pending = Math.max(0, f.pending - 1);
        if (this.figures.get(key) === f) this.figures.delete(key);
        throw err;
      },
    );
    if (tokens < MARGIN) return sent;
    sent.catch(() => {}); // answered already: a failure only forgets the figure
    f.tokens = tokens;
    f.at = nowMs;
    return {
      allowed: true,
      remaining: Math.floor(tokens),
      retryAfterMs: 0,
      resetMs: Math.ceil((capacity - tokens) / rate),
    };
  }

  /** How many buckets it holds figures for (tests). */
  get size(): number {
    return this.figures.size;
  }

  /** A bucket with no figure yet: none to answer from (its first take waits). */
  private unknown(key: string, nowMs: number): Figure {
    if (this.figures.size >= MAX_BUCKETS) this.figures.clear();
    const f = { tokens: 0, at: nowMs, pending: 0 };
    this.figures.set(key, f);
    return f;
  }

  /**
   * The engine's reply to a take made at `at`: the bucket's figure is what it says was left then (whole tokens: a
   * little less than the truth), less the takes still unanswered.
   */
  private learn(key: string, r: TakeResult, f: Figure, at: number): void {
    f.pending = Math.max(0, f.pending - 1);
    // a figure forgotten meanwhile (a failure, or the map cleared) stays forgotten: the next take waits
    if (this.figures.get(key) !== f) return;
    f.tokens = r.remaining - f.pending;
    f.at = at;
  }
}
