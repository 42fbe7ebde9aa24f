// The one error catalogue: every failure leaves the server as {"error", "message", ...extra}.

export const ERROR_STATUS = {
  invalid_request: 400,
  unauthorized: 401,
  payment_required: 402,
  forbidden: 403,
  ip_banned: 403,
  /** The token lacks the scope the request needs (`scope` names it: schema/tokens.ts). */
  insufficient_scope: 403,
  /** The principal is suspended by a moderator: every token of it is refused (runtime/moderation/). */
  suspended: 403,
  not_found: 404,
  method_not_allowed: 405,
  conflict: 409,
  /** An Idempotency-Key sent again with a different request (runtime/http/idempotency.ts). */
  idempotency_key_reused: 422,
  payload_too_large: 413,
  unsupported_media_type: 415,
  rate_limited: 429,
  /** The same text posted (a moment, a comment) more often than the duplicate limit allows (runtime/moderation/spam.ts). */
  duplicate_content: 429,
  internal: 500,
  unavailable: 503,
  /** Payments cannot be settled here now (no facilitator configured, or it did not answer); nothing was charged. */
  payments_unavailable: 503,
} as const;

export type ErrorCode = keyof typeof ERROR_STATUS;

export interface ErrorBody {
  error: ErrorCode;
  message: string;
  [extra: string]: unknown;
}

export class ApiError extends Error {
  readonly status: number;
  readonly code: ErrorCode;
  readonly extra: Record<string, unknown>;
  readonly headers: Record<string, string>;

  constructor(
    code: ErrorCode,
    message: string,
    extra: Record<string, unknown> = {},
    headers: Record<string, string> = {},
  ) {
    super(message);
    this.code = code;
    this.status = ERROR_STATUS[code];
    this.extra = extra;
    this.headers = headers;
  }

  body(): ErrorBody {
    return { error: this.code, message: this.message, ...this.extra };
  }
}

export const invalid = (message: string, extra: Record<string, unknown> = {}) =>
  new ApiError("invalid_request", message, extra);
export const notFound = (what = "resource") => new ApiError("not_found", `${what} not found`);
export const unauthorized = (message = "a valid bearer token is required") =>
  new ApiError("unauthorized", message, {}, { "WWW-Authenticate": 'Bearer realm="flock"' });
export const conflict = (message: string) => new ApiError("conflict", message);

/** 403 insufficient_scope: the calling token lacks `scope` (a scope, or `full`: every scope its principal may hold). */
export const insufficientScope = (scope: string) =>
  new ApiError(
    "insufficient_scope",
    scope === "full"
      ? "this needs a full token (every scope: the one registration or sign-in gives)"
      : `this token lacks the scope ${scope}`,
    { scope },
  );
/** A suspended principal's request, on any route and any token of it (runtime/auth.ts, runtime/moderation/). */
export const suspendedError = () =>
  new ApiError("suspended", "this account is suspended by a moderator; its tokens are refused until it is lifted");
