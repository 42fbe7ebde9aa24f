// SPEC section 7's retry rules, as pure functions over an injectable clock.
//  1. Retry-After present: wait at least that many seconds.
//  2. Otherwise: min(60, base * 2^attempt) + random(0, base) seconds, base 1 s, cap 60 s.
//  3. Give up after `maxAttempts` sends and raise the error. A success resets the count (it is per request).
// A request that carries an Idempotency-Key (every creating call does) may also be retried where a plain POST may
// not: after a 502/503/504, after no answer at all (a connection lost), and after a 409 `conflict` with Retry-After
// (its first attempt is still running on the server). Its retries send the same key, so the server answers what the
// first one did instead of creating anything twice.

export interface RetryPolicy {
  /** Total sends of one request before giving up (SPEC: 5). */
  maxAttempts: number;
  baseMs: number;
  capMs: number;
}

export const DEFAULT_RETRY: RetryPolicy = { maxAttempts: 5, baseMs: 1000, capMs: 60_000 };

/** One retry about to happen: what was answered and how long the client now waits (the `onRetry` option). */
export interface RetryEvent {
  method: string;
  path: string;
  /**
   * The status that is retried: 429; 502/503/504 for an idempotent method or a request with an Idempotency-Key; 409
   * (`conflict`: the key's first request is still running); 0 when no answer came (the connection failed), retried
   * only with an Idempotency-Key.
   */
  status: number;
  /** The `error` code of its body, when it had one; for status 0, what failed (`ECONNRESET`, `TypeError`...). */
  code: string | undefined;
  /** The Idempotency-Key every attempt of this request sends (the same on each), when it has one. */
  idempotencyKey?: string;
  /** 1 for the first retry. */
  retry: number;
  /** Retries this request may make in all (maxAttempts - 1). */
  maxRetries: number;
  waitMs: number;
  /** The wait is the server's Retry-After (otherwise the exponential backoff). */
  retryAfter: boolean;
}

/**
 * Milliseconds to wait before retry number `attempt` (0 for the first retry).
 * @example
 * ```ts
 * backoffMs(DEFAULT_RETRY, 2, null, Math.random); // 4000-5000 ms: the third retry's wait
 * backoffMs(DEFAULT_RETRY, 0, "7", Math.random); // 7000: the server's Retry-After wins
 * ```
 */
export function backoffMs(
  policy: RetryPolicy,
  attempt: number,
  retryAfterHeader: string | null,
  random: () => number,
): number {
  const ra = parseRetryAfter(retryAfterHeader);
  if (ra !== undefined) return ra;
  return Math.min(policy.capMs, policy.baseMs * 2 ** attempt) + random() * policy.baseMs;
}

/** The WebSocket stream's reconnect waits: the first base, doubling per failure in a row, up to the cap. */
export const RECONNECT = { baseMs: 250, capMs: 30_000 } as const;

/**
 * Milliseconds before the message stream's WebSocket reconnects after `failures` failed connections in a row (0: the
 * socket was open and closed). The exponential wait is spread from half to one and a half times itself, so that the
 * thousands of clients a restarting node drops at the same instant come back spread out, not in waves.
 * @example
 * ```ts
 * reconnectDelayMs(0, Math.random); // 125-375 ms after an open socket closed
 * reconnectDelayMs(4, Math.random); // 2000-6000 ms after the fifth failure in a row
 * ```
 */
export function reconnectDelayMs(failures: number, random: () => number): number {
  const d = Math.min(RECONNECT.capMs, RECONNECT.baseMs * 2 ** failures);
  return d / 2 + random() * d;
}

/** Retry-After as milliseconds: delta-seconds or an HTTP date; undefined when absent or unusable. */
export function parseRetryAfter(value: string | null, now: number = Date.now()): number | undefined {
  if (value === null || value.trim() === "") return undefined;
  if (/^\d+$/.test(value.trim())) return Number(value.trim()) * 1000;
  const at = Date.parse(value);
  return Number.isNaN(at) ? undefined : Math.max(0, at - now);
}

/**
 * A request may be retried after this answer? 429 means "not processed", so any method may retry it. A 502/503/504
 * only for an idempotent method, or for a request with an Idempotency-Key (`keyed`). A 409 only for a keyed request
 * whose answer is the server's "this key's first request is still running" (`conflict` with a Retry-After; a reused
 * payment nonce or "already friends" is a `conflict` without one, and final).
 */
export function retryable(
  status: number,
  method: string,
  keyed = false,
  answer?: { code?: string; retryAfter?: boolean },
): boolean {
  if (status === 429) return true;
  const idempotent = method === "GET" || method === "HEAD" || method === "PUT" || method === "DELETE";
  if (status === 502 || status === 503 || status === 504) return idempotent || keyed;
  return status === 409 && keyed && answer?.code === "conflict" && answer.retryAfter === true;
}
