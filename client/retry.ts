// SPEC section 7's retry rules, as pure functions over an injectable clock.
//  1. Retry-After present: wait at least that many seconds.
//  2. Otherwise: min(60, base * 2^attempt) + random(0, base) seconds, base 1 s, cap 60 s.
//  3. Give up after `maxAttempts` sends and raise the error. A success resets the count (it is per request).

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
  /** The status that is retried (429, or 502/503/504 for an idempotent method). */
  status: number;
  /** The `error` code of its body, when it had one. */
  code: string | undefined;
  /** 1 for the first retry. */
  retry: number;
  /** Retries this request may make in all (maxAttempts - 1). */
  maxRetries: number;
  waitMs: number;
  /** The wait is the server's Retry-After (otherwise the exponential backoff). */
  retryAfter: boolean;
}

/** Milliseconds to wait before retry number `attempt` (0 for the first retry). */
export function backoffMs(policy: RetryPolicy, attempt: number, retryAfterHeader: string | null, random: () => number): number {
  const ra = parseRetryAfter(retryAfterHeader);
  if (ra !== undefined) return ra;
  return Math.min(policy.capMs, policy.baseMs * 2 ** attempt) + random() * policy.baseMs;
}

/** Retry-After as milliseconds: delta-seconds or an HTTP date; undefined when absent or unusable. */
export function parseRetryAfter(value: string | null, now: number = Date.now()): number | undefined {
  if (value === null || value.trim() === "") return undefined;
  if (/^\d+$/.test(value.trim())) return Number(value.trim()) * 1000;
  const at = Date.parse(value);
  return Number.isNaN(at) ? undefined : Math.max(0, at - now);
}

/** A request may be retried after this status? 429 means "not processed", so any method may retry it. */
export function retryable(status: number, method: string): boolean {
  if (status === 429) return true;
  const idempotent = method === "GET" || method === "HEAD" || method === "PUT" || method === "DELETE";
  return idempotent && (status === 502 || status === 503 || status === 504);
}
