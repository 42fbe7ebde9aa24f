// The errors the SDK raises: FlockError for an answer that is a failure, FlockNetworkError (a FlockError too) for a
// request that got no answer at all, PaymentRequiredError for a paid agent that was not paid.

/** Statuses worth trying again after a wait: "not processed" (429) and a backend or gateway that failed (502-504). */
const RETRYABLE_STATUS = new Set([429, 502, 503, 504]);

/**
 * A failed request: the server's error answer (`status`, its `code` such as `invalid_request`, its `message`), or,
 * as the subclass {@link FlockNetworkError}, no answer at all. Every SDK method rejects with one of these.
 *
 * @example
 * ```ts skip-run
 * try {
 *   await flock.post({ content: "", visibility: "public" });
 * } catch (err) {
 *   if (err instanceof FlockError) console.log(err.status, err.code, err.message); // 400 invalid_request content: ...
 * }
 * ```
 */
export class FlockError extends Error {
  /** The HTTP status; 0 when no answer came (a {@link FlockNetworkError}). */
  readonly status: number;
  /** The `error` code of the answer (`invalid_request`, `not_found`, `rate_limited`...), or what failed when none came. */
  readonly code: string;
  /** Seconds the server asked to wait (429, 503), when it said. */
  readonly retryAfter: number | undefined;
  /** The parsed error body, with its extra fields (`field`, `issues`, `retry_after`...). */
  readonly body: unknown;
  /**
   * Trying the same request again later may succeed: a 429, a 502/503/504, or a network failure other than a bad
   * URL. (The SDK has already retried it per its retry policy before raising.)
   */
  readonly retryable: boolean;

  constructor(status: number, code: string, message: string, retryAfter?: number, body?: unknown, retryable?: boolean) {
    super(message);
    this.name = "FlockError";
    this.status = status;
    this.code = code;
    this.retryAfter = retryAfter;
    this.body = body;
    this.retryable = retryable ?? RETRYABLE_STATUS.has(status);
  }
}

/** What a request that got no answer failed with, as Node (undici) or the browser reported it. */
export interface NetworkCause {
  /** The underlying error's message (`connect ECONNREFUSED 127.0.0.1:8080`, `getaddrinfo ENOTFOUND nohost`...). */
  message: string;
  /** Its system code (`ECONNREFUSED`, `ENOTFOUND`, `ECONNRESET`, `UND_ERR_SOCKET`...), when it had one. */
  code: string | undefined;
}

/** Codes that trying again will not fix: the name does not resolve, the URL is not one. */
const PERMANENT = new Set(["ENOTFOUND", "invalid_url", "ERR_INVALID_URL"]);

const HINTS: Record<string, string> = {
  ECONNREFUSED: "nothing is listening there: is the server running, and is the base URL (FLOCK_URL) right?",
  ENOTFOUND: "the host name does not resolve: check the base URL (FLOCK_URL)",
  EAI_AGAIN: "the host name could not be resolved just now (DNS): check the network and the base URL (FLOCK_URL)",
  ECONNRESET: "the connection was dropped: the server may be restarting; try again",
  UND_ERR_SOCKET: "the connection was dropped: the server may be restarting; try again",
  ETIMEDOUT: "the server did not answer in time: check the network and the base URL (FLOCK_URL)",
  timeout: "no answer before the request's timeout: the server may be overloaded or unreachable; try again",
};

/**
 * A request that got no answer: the server is down or unreachable, the host name does not resolve, the connection
 * was reset or timed out, or the base URL is not an http(s) URL. `status` is 0; `url` is what was requested; `cause`
 * holds the underlying error's message and code; `retryable` says whether trying again may help.
 *
 * @example
 * ```ts skip-run
 * try {
 *   await new Flock({ baseUrl: "http://127.0.0.1:9" }).me();
 * } catch (err) {
 *   if (err instanceof FlockNetworkError) console.log(err.url, err.cause.code, err.retryable); // ... ECONNREFUSED true
 * }
 * ```
 */
export class FlockNetworkError extends FlockError {
  /** The URL that was requested. */
  readonly url: string;
  /** The underlying failure. */
  declare readonly cause: NetworkCause;

  constructor(url: string, cause: NetworkCause, message?: string) {
    const code = cause.code ?? "network_error";
    const hint = HINTS[code] ?? "check the network and the base URL (FLOCK_URL)";
    const why = `${cause.message}${cause.code && !cause.message.includes(cause.code) ? ` (${cause.code})` : ""}`;
    super(
      0,
      code === "invalid_url" ? "invalid_url" : "network_error",
      message ?? `could not reach ${url}: ${why}; ${hint}`,
      undefined,
      undefined,
      !PERMANENT.has(code),
    );
    this.name = "FlockNetworkError";
    this.url = url;
    Object.defineProperty(this, "cause", { value: cause, enumerable: false, writable: true, configurable: true });
  }

  /**
   * The FlockNetworkError for what fetch threw for `url` (an abort by the caller's signal is not one: undefined).
   * @example
   * ```ts
   * const err = FlockNetworkError.from(url, new TypeError("fetch failed", { cause: { code: "ECONNRESET" } }));
   * console.log(err?.retryable); // true
   * ```
   */
  static from(url: string, err: unknown): FlockNetworkError | undefined {
    if (err instanceof FlockError) return err instanceof FlockNetworkError ? err : undefined;
    const e = err as { name?: unknown; message?: unknown; code?: unknown; cause?: unknown } | null;
    if (e?.name === "AbortError") return undefined;
    if (e?.name === "TimeoutError")
      return new FlockNetworkError(url, { message: String(e.message ?? "timed out"), code: "timeout" });
    // undici: TypeError("fetch failed", { cause: Error { code: "ECONNREFUSED", ... } }), sometimes an AggregateError
    const inner = (e?.cause ?? e) as { message?: unknown; code?: unknown; errors?: unknown[] } | null;
    const first = (Array.isArray(inner?.errors) ? inner.errors[0] : undefined) as
      { message?: unknown; code?: unknown } | undefined;
    const code = [inner?.code, first?.code, e?.code].find((c): c is string => typeof c === "string");
    let message =
      [inner?.message, first?.message, e?.message].find((m): m is string => typeof m === "string" && m !== "") ??
      "fetch failed";
    if (message === "fetch failed" && e?.message === "fetch failed" && first?.message) message = String(first.message);
    return new FlockNetworkError(url, { message, code });
  }
}

/**
 * A paid agent asked for payment and the client has no account (or the cap forbids paying).
 * @example
 * ```ts
 * try {
 *   await flock.send(paidAgentId, "hello");
 * } catch (err) {
 *   if (err instanceof PaymentRequiredError) console.log(err.message, err.requirements); // the price, asset and payee
 * }
 * ```
 */
export class PaymentRequiredError extends FlockError {
  /** The x402 requirements of the 402 answer (what to pay, to whom, on which network), or null when it had none. */
  readonly requirements: unknown;

  constructor(message: string, requirements: unknown, body?: unknown) {
    super(402, "payment_required", message, undefined, body);
    this.name = "PaymentRequiredError";
    this.requirements = requirements;
  }
}
