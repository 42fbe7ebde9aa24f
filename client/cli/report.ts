// How a failed run reads: the server's error (or what went wrong on the way to it) and what to do about it, on
// stderr, as JSON under --json (with a `hint` field). Answers the exit code:
// 0 ok, 2 usage, 3 unauthorized, 4 not found, 5 rate limited, 6 payment required, 7 invalid request, 1 anything else.
import { FlockError, PaymentRequiredError } from "../index.ts";
import { UsageError, type Write } from "./context.ts";

export const NO_TOKEN_HINT = "register first (flockctl register <name> --save), or export FLOCK_TOKEN / flockctl login";
export const SERVER_HINT = "is the server running? set FLOCK_URL (or --url) to its address";
/** What a 401 says to do: a token that is not one of Flock's is told apart from one the server no longer knows. */
function refusedHint(used: ReportOptions["token"]): string {
  if (!used) return NO_TOKEN_HINT;
  const which = used.from === "FLOCK_TOKEN" ? "the token in FLOCK_TOKEN" : `the token (${used.from})`;
  // the server's check of a token's form (runtime/tokens.ts): am_ (an agent) or pt_ (a person), then 43 characters
  if (!/^(am|pt)_[0-9A-Za-z]{43}$/.test(used.token))
    return `${which} is not a Flock token (one is am_ or pt_ and 43 letters and digits, without quotes or spaces): sign in again with flockctl login <token>, or register a new agent with flockctl register <name> --save`;
  return `${which} was refused (revoked, replaced or expired): sign in again with flockctl login <token>, or register a new agent with flockctl register <name> --save`;
}

/** A failure before anything was sent (no token, a URL that is not one): a message and a hint, exit `code`. */
export class SetupError extends Error {
  constructor(
    message: string,
    readonly hint: string,
    readonly code: number,
  ) {
    super(message);
  }
}

/** The URL the CLI talks to, checked: http(s) with a host, else a SetupError that names it. */
export function checkUrl(url: string, from: string): string {
  let ok = false;
  try {
    const u = new URL(url);
    ok = (u.protocol === "http:" || u.protocol === "https:") && u.hostname !== "";
  } catch {
    ok = false;
  }
  if (!ok)
    throw new SetupError(
      `${from} "${url}" is not an http:// or https:// URL (such as http://localhost:8080)`,
      SERVER_HINT,
      2,
    );
  return url;
}

/** What a request that got no answer failed with (`connect ECONNREFUSED ...`), or undefined for an answered one. */
export function unreachable(err: unknown): string | undefined {
  const e = err as {
    name?: string;
    message?: string;
    code?: unknown;
    cause?: { code?: unknown; message?: unknown };
  } | null;
  if (e === null || typeof e !== "object") return undefined;
  // the SDK's FlockNetworkError (status 0), or fetch's own TypeError where an older SDK let it through
  const noAnswer =
    err instanceof FlockError ? err.status === 0 : e.name === "TypeError" && /fetch failed/i.test(e.message ?? "");
  if (!noAnswer) return undefined;
  const cause = [e.cause?.message, e.cause?.code, e.code, e.message].find(
    (c): c is string => typeof c === "string" && c !== "" && c !== "fetch failed",
  );
  return cause ?? "no answer";
}

interface ReportOptions {
  json: boolean | undefined;
  url: string;
  usage: string;
  /** The run's Idempotency-Key, when it creates something. */
  idempotencyKey?: string;
  /** The token the run sent and where it came from (--token, FLOCK_TOKEN, the saved login). */
  token?: { token: string; from: string };
}

/** Whether a creating command's failure leaves its outcome unknown (no answer, a 5xx, its key's first try running). */
function outcomeUnknown(err: unknown): boolean {
  if (!(err instanceof FlockError)) return true;
  return (
    err.status === 0 ||
    err.status >= 500 ||
    (err.status === 409 && err.code === "conflict" && err.retryAfter !== undefined)
  );
}

/** Writes a failure to `out` (stderr); answers the exit code. */
export function report(err: unknown, out: Write, o: ReportOptions): number {
  if (err instanceof UsageError) {
    out(err.usage ? `${err.message}\n${o.usage}` : `${err.message}\n(flockctl --help lists every command)`);
    return 2;
  }
  if (err instanceof SetupError) {
    out(
      o.json
        ? JSON.stringify({ error: "setup", message: err.message, hint: err.hint })
        : `error: ${err.message}\n${err.hint}`,
    );
    return err.code;
  }
  const key = o.idempotencyKey !== undefined && outcomeUnknown(err) ? o.idempotencyKey : undefined;
  const again = key
    ? `the outcome is unknown: run the same command with --idempotency-key ${key} to retry it without creating it twice`
    : undefined;
  const down = unreachable(err);
  if (down !== undefined) {
    const message = `cannot reach ${o.url} (${down})`;
    out(
      o.json
        ? JSON.stringify({
            error: "unreachable",
            message,
            url: o.url,
            hint: SERVER_HINT,
            ...(key ? { idempotency_key: key } : {}),
          })
        : [`error: ${message}`, SERVER_HINT, again].filter(Boolean).join("\n"),
    );
    return 1;
  }
  if (err instanceof FlockError) {
    const hint = err.status === 401 ? refusedHint(o.token) : undefined;
    const body = (err.body ?? { error: err.code, message: err.message }) as object;
    const extra = { ...(hint ? { hint } : {}), ...(key ? { idempotency_key: key } : {}) };
    const retry = err.retryAfter ? ` (retry after ${err.retryAfter}s)` : "";
    out(
      o.json
        ? JSON.stringify({ ...body, ...extra })
        : [`error ${err.status} ${err.code}: ${err.message}${retry}`, hint, again].filter(Boolean).join("\n"),
    );
    if (err instanceof PaymentRequiredError || err.status === 402) return 6;
    return ({ 401: 3, 404: 4, 429: 5, 400: 7 } as Record<number, number>)[err.status] ?? 1;
  }
  const message = err instanceof Error ? err.message : String(err);
  out(
    o.json
      ? JSON.stringify({ error: "error", message, ...(key ? { idempotency_key: key } : {}) })
      : [`error: ${message}`, again].filter(Boolean).join("\n"),
  );
  return 1;
}
