// HTTP transport of the SDK: JSON in and out, bearer auth, typed errors, SPEC section 7 retries (with the same
// Idempotency-Key on each attempt of a creating call), optional send throttling, AbortSignal everywhere.
import { FlockError, FlockNetworkError } from "./errors.ts";
import { checkIdempotencyKey } from "./idempotency.ts";
import { backoffMs, DEFAULT_RETRY, parseRetryAfter, type RetryEvent, type RetryPolicy, retryable } from "./retry.ts";
import { type Clock, realClock, Throttle } from "./throttle.ts";

/** Any pino-compatible logger (or a subset of it). */
export interface LoggerLike {
  debug?(obj: object, msg?: string): void;
  warn?(obj: object, msg?: string): void;
}

export interface TransportOptions {
  baseUrl: string;
  token?: string;
  fetch?: typeof fetch;
  clock?: Clock;
  random?: () => number;
  retry?: Partial<RetryPolicy>;
  /** Self-imposed limit on message sends per second (default 8, below the server's 10). */
  sendsPerSecond?: number;
  logger?: LoggerLike;
  /** Called before each retry's wait (SPEC section 7), e.g. to show why an answer is slow. */
  onRetry?: (event: RetryEvent) => void;
}

export interface RequestOptions {
  json?: unknown;
  /** A raw body (uploads); send its content type in `headers`. */
  body?: Blob;
  query?: Record<string, string | number | undefined>;
  signal?: AbortSignal;
  /** Wait for the send throttle first. */
  throttled?: boolean;
  headers?: Record<string, string>;
  /**
   * Sent as the `Idempotency-Key` header on every attempt. It also lets a POST be retried after a 502/503/504, a 409
   * "still running" or no answer at all: the server answers a repeated key with the first answer.
   */
  idempotencyKey?: string;
  /**
   * Sending it twice has the effect of sending it once (an ack): a POST retried like an idempotent method after a
   * 502/503/504, and after no answer at all.
   */
  idempotent?: boolean;
}

export interface RawResponse {
  status: number;
  headers: Headers;
  body: unknown;
}

export class Transport {
  readonly baseUrl: string;
  token: string | undefined;
  readonly clock: Clock;
  private readonly fetchImpl: typeof fetch;
  private readonly random: () => number;
  private readonly retry: RetryPolicy;
  private readonly throttle: Throttle;
  private readonly logger: LoggerLike | undefined;
  private readonly onRetry: ((event: RetryEvent) => void) | undefined;

  constructor(opts: TransportOptions) {
    this.baseUrl = opts.baseUrl.replace(/\/+$/, "");
    this.token = opts.token;
    // called as a plain function: a browser's fetch throws "Illegal invocation" when called as this.fetchImpl(...)
    this.fetchImpl = opts.fetch ?? ((input, init) => globalThis.fetch(input, init));
    this.clock = opts.clock ?? realClock;
    this.random = opts.random ?? Math.random;
    this.retry = { ...DEFAULT_RETRY, ...opts.retry };
    this.throttle = new Throttle(opts.sendsPerSecond ?? 8, this.clock);
    this.logger = opts.logger;
    this.onRetry = opts.onRetry;
  }

  /** Sends a request, retrying per SPEC section 7; answers the parsed body or raises FlockError. */
  async request<T>(method: string, path: string, opts: RequestOptions = {}): Promise<T> {
    const r = await this.send(method, path, opts);
    if (r.status >= 400) throw toError(r);
    return r.body as T;
  }

  /** Like request, but answers every final response (used where a status other than 2xx is meaningful). */
  async send(method: string, path: string, opts: RequestOptions = {}): Promise<RawResponse> {
    const key = opts.idempotencyKey === undefined ? undefined : checkIdempotencyKey(opts.idempotencyKey);
    // what may be sent again without doing anything twice: a keyed request (the server answers a repeated key with
    // the first answer), or one idempotent by nature
    const keyed = key !== undefined || opts.idempotent === true;
    for (let attempt = 0; ; attempt++) {
      if (opts.throttled) await this.throttle.wait(opts.signal);
      const last = attempt + 1 >= this.retry.maxAttempts;
      let r: RawResponse;
      try {
        r = await this.once(method, path, opts);
      } catch (err) {
        // no answer (connection refused or lost, the node died): with a key the outcome can be asked again
        if (!keyed || last || opts.signal?.aborted || (err instanceof FlockError && !err.retryable)) throw err;
        await this.beforeRetry(method, path, opts, attempt, 0, failureCode(err), null);
        continue;
      }
      if (r.status < 400 || last) return r;
      const code = (r.body as { error?: unknown } | undefined)?.error;
      const retryAfter = r.headers.get("retry-after");
      const answer = { code: typeof code === "string" ? code : undefined, retryAfter: retryAfter !== null };
      if (!retryable(r.status, method, keyed, answer)) return r;
      await this.beforeRetry(method, path, opts, attempt, r.status, answer.code, retryAfter);
    }
  }

  /** Reports a retry (logger, onRetry) and waits for it: Retry-After when given, otherwise the backoff. */
  private async beforeRetry(
    method: string,
    path: string,
    opts: RequestOptions,
    attempt: number,
    status: number,
    code: string | undefined,
    retryAfter: string | null,
  ): Promise<void> {
    const wait = backoffMs(this.retry, attempt, retryAfter, this.random);
    const key = opts.idempotencyKey;
    this.logger?.warn?.(
      { method, path, status, code, attempt: attempt + 1, waitMs: wait, ...(key ? { idempotencyKey: key } : {}) },
      "flock: retrying",
    );
    this.onRetry?.({
      method,
      path,
      status,
      code,
      retry: attempt + 1,
      maxRetries: this.retry.maxAttempts - 1,
      waitMs: wait,
      retryAfter: parseRetryAfter(retryAfter) !== undefined,
      ...(key ? { idempotencyKey: key } : {}),
    });
    await this.clock.sleep(wait, opts.signal);
  }

  private async once(method: string, path: string, opts: RequestOptions): Promise<RawResponse> {
    const headers: Record<string, string> = { accept: "application/json", ...opts.headers };
    if (this.token) headers["authorization"] = `Bearer ${this.token}`;
    if (opts.idempotencyKey !== undefined) headers["idempotency-key"] = opts.idempotencyKey;
    let body: string | Blob | undefined = opts.body;
    if (opts.json !== undefined) {
      body = JSON.stringify(opts.json);
      headers["content-type"] = "application/json";
    }
    const url = this.url(path, opts.query);
    const res = await this.fetch(url, { method, headers, body, signal: opts.signal });
    let text: string;
    try {
      text = await res.text();
    } catch (err) {
      throw FlockNetworkError.from(url, err) ?? err; // the connection was lost while the answer streamed in
    }
    let parsed: unknown;
    if (text) {
      try {
        parsed = JSON.parse(text);
      } catch {
        parsed = text;
      }
    }
    const replayed = res.headers.get("idempotency-replayed") === "true";
    this.logger?.debug?.({ method, path, status: res.status, ...(replayed ? { replayed } : {}) }, "flock: response");
    return { status: res.status, headers: res.headers, body: parsed };
  }

  /** One request without retries, answering the fetch Response itself (downloads). */
  raw(
    method: string,
    path: string,
    opts: { signal?: AbortSignal; headers?: Record<string, string> } = {},
  ): Promise<Response> {
    const headers: Record<string, string> = { ...opts.headers };
    if (this.token) headers["authorization"] = `Bearer ${this.token}`;
    return this.fetch(this.url(path), { method, headers, signal: opts.signal });
  }

  /**
   * fetch, with every failure to get an answer raised as a FlockNetworkError naming the URL and the cause (an abort
   * by the caller's signal stays the AbortError it is).
   */
  private async fetch(url: string, init: RequestInit): Promise<Response> {
    if (!/^https?:\/\//i.test(this.baseUrl)) throw badBaseUrl(this.baseUrl, url);
    try {
      return await this.fetchImpl(url, init);
    } catch (err) {
      throw FlockNetworkError.from(url, err) ?? err;
    }
  }

  url(path: string, query?: Record<string, string | number | undefined>): string {
    const qs = new URLSearchParams();
    for (const [k, v] of Object.entries(query ?? {})) if (v !== undefined) qs.set(k, String(v));
    const s = qs.toString();
    return this.baseUrl + path + (s ? `?${s}` : "");
  }
}

/** A base URL that is not an http(s) URL (`localhost:8080`, `flock.example`): said before anything is sent. */
function badBaseUrl(baseUrl: string, url: string): FlockNetworkError {
  const scheme = /^[a-z][a-z\d+.-]*:\/\//i.test(baseUrl);
  const fix = scheme ? "use an http:// or https:// URL" : `add the scheme: "http://${baseUrl}"`;
  return new FlockNetworkError(
    url,
    { message: `the base URL "${baseUrl}" is not an http(s) URL`, code: "invalid_url" },
    `the base URL "${baseUrl}" is not an http(s) URL: ${fix} (the baseUrl option, or FLOCK_URL for the command line)`,
  );
}

/** What a request that got no answer failed with: the socket's error code (ECONNRESET...), else the error's name. */
function failureCode(err: unknown): string {
  if (err instanceof FlockNetworkError) return err.cause.code ?? "network_error";
  const e = err as { name?: unknown; code?: unknown; cause?: { code?: unknown } } | null;
  const code = e?.cause?.code ?? e?.code ?? e?.name;
  return typeof code === "string" ? code : "error";
}

export function toError(r: RawResponse): FlockError {
  const b = (r.body ?? {}) as { error?: string; message?: string; retry_after?: number };
  const header = r.headers.get("retry-after");
  const retryAfter = header !== null && /^\d+$/.test(header) ? Number(header) : b.retry_after;
  return new FlockError(r.status, b.error ?? "http_error", b.message ?? `HTTP ${r.status}`, retryAfter, r.body);
}
