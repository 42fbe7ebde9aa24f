// How an endpoint's failures are paced and when they disable it: the pause before the next attempt grows
// exponentially with each failure in a row, with jitter (so endpoints failing together do not retry together), up to
// a cap; a run of failures that began longer ago than the disable delay ends the endpoint. Pure: time and chance are
// arguments, so unit tests drive it by hand.
import { WEBHOOK_LIMITS } from "../limits/policies.ts";

export interface BackoffPolicy {
  firstMs: number;
  maxMs: number;
  /** Up to this fraction of the pause is added or taken at random. */
  jitter: number;
}

/** The pause after the `failures`-th failure in a row (1: the first). `random` in [0, 1). */
export function retryDelayMs(
  failures: number,
  random: () => number = Math.random,
  p: BackoffPolicy = WEBHOOK_LIMITS.backoff,
): number {
  const base = Math.min(p.maxMs, p.firstMs * 2 ** Math.max(0, Math.min(failures - 1, 30)));
  return Math.max(0, Math.round(base * (1 + p.jitter * (2 * random() - 1))));
}

/** One endpoint's run of failures, as its delivery sees it. */
export class FailureRun {
  /** Failures in a row (0: the last attempt succeeded). */
  failures = 0;
  /** When the run began (ms on the node's clock), as Postgres holds it; undefined while none runs. */
  since: number | undefined;

  constructor(
    private readonly disableAfterMs: number,
    private readonly random: () => number = Math.random,
  ) {}

  /** An attempt failed at `now`: whether the endpoint is now to be disabled, and the pause before the next. */
  failed(now: number): { disable: boolean; retryInMs: number } {
    this.failures++;
    this.since ??= now;
    return { disable: now - this.since >= this.disableAfterMs, retryInMs: retryDelayMs(this.failures, this.random) };
  }

  /** An attempt succeeded: whether a run ended (Postgres's `failing_since` is then cleared). */
  succeeded(): boolean {
    const was = this.since !== undefined || this.failures > 0;
    this.failures = 0;
    this.since = undefined;
    return was;
  }
}
