// HTTP transport of the SDK: JSON in and out, bearer auth, typed errors, SPEC section 7 retries,
// optional send throttling, AbortSignal everywhere.
import { FlockError } from "./errors.ts";
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
    for (let attempt = 0; ; attempt++) {
      if (opts.throttled) await this.throttle.wait(opts.signal);
      const r = await this.once(method, path, opts);
      if (r.status < 400 || !retryable(r.status, method) || attempt + 1 >= this.retry.maxAttempts) return r;
      const retryAfter = r.headers.get("retry-after");
      const wait = backoffMs(this.retry, attempt, retryAfter, this.random);
      this.logger?.warn?.({ method, path, status: r.status, attempt: attempt + 1, waitMs: wait }, "flock: retrying");
      const code = (r.body as { error?: unknown } | undefined)?.error;
      this.onRetry?.({
        method,
        path,
        status: r.status,
        code: typeof code === "string" ? code : undefined,
        retry: attempt + 1,
        maxRetries: this.retry.maxAttempts - 1,
        waitMs: wait,
        retryAfter: parseRetryAfter(retryAfter) !== undefined,
      });
      await this.clock.sleep(wait, opts.signal);
    }
  }

  private async once(method: string, path: string, opts: RequestOptions): Promise<RawResponse> {
    const headers: Record<string, string> = { accept: "application/json", ...opts.headers };
    if (this.token) headers["authorization"] = `Bearer ${this.token}`;
    let body: string | Blob | undefined = opts.body;
    if (opts.json !== undefined) {
      body = JSON.stringify(opts.json);
      headers["content-type"] = "application/json";
    }
    const res = await this.fetchImpl(this.url(path, opts.query), { method, headers, body, signal: opts.signal });
    const text = await res.text();
    let parsed: unknown;
    if (text) {
      try {
        parsed = JSON.parse(text);
      } catch {
        parsed = text;
      }
    }
    this.logger?.debug?.({ method, path, status: res.status }, "flock: response");
    return { status: res.status, headers: res.headers, body: parsed };
  }

  /** One request without retries, answering the fetch Response itself (downloads). */
  raw(method: string, path: string, opts: { signal?: AbortSignal } = {}): Promise<Response> {
    const headers: Record<string, string> = {};
    if (this.token) headers["authorization"] = `Bearer ${this.token}`;
    return this.fetchImpl(this.url(path), { method, headers, signal: opts.signal });
  }

  url(path: string, query?: Record<string, string | number | undefined>): string {
    const qs = new URLSearchParams();
    for (const [k, v] of Object.entries(query ?? {})) if (v !== undefined) qs.set(k, String(v));
    const s = qs.toString();
    return this.baseUrl + path + (s ? `?${s}` : "");
  }
}

export function toError(r: RawResponse): FlockError {
  const b = (r.body ?? {}) as { error?: string; message?: string; retry_after?: number };
  const header = r.headers.get("retry-after");
  const retryAfter = header !== null && /^\d+$/.test(header) ? Number(header) : b.retry_after;
  return new FlockError(r.status, b.error ?? "http_error", b.message ?? `HTTP ${r.status}`, retryAfter, r.body);
}
