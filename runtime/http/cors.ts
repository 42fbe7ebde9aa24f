// CORS for browser apps on other origins: every /v1 answer (errors too) carries Access-Control-Allow-Origin and
// the headers a client must read; a preflight OPTIONS on any /v1 path answers 204; the WebSocket upgrade checks
// Origin against the same list. `*` is the default and is safe: credentials travel as bearer headers, never cookies.

/** Headers a browser may send on a cross-origin request (the preflight's Access-Control-Allow-Headers). */
const CORS_REQUEST_HEADERS = [
  "authorization",
  "content-type",
  "idempotency-key",
  "payment-signature",
  "x-payment",
  "x-request-id",
];
/** Headers a browser app may read from an answer. */
const CORS_EXPOSED_HEADERS = [
  "Retry-After",
  "RateLimit",
  "RateLimit-Policy",
  "PAYMENT-REQUIRED",
  "PAYMENT-RESPONSE",
  "Link",
  "ETag",
  "X-Request-Id",
  "Idempotency-Replayed",
];
const METHODS = "GET, HEAD, POST, PUT, PATCH, DELETE";
/** Seconds a browser may cache a preflight (Chromium caps it at 7200). */
const CORS_MAX_AGE = 86_400;

export interface CorsPolicy {
  /** Any origin (`*`). */
  readonly any: boolean;
  /** The allowed origins, as browsers send them (scheme://host[:port]). */
  readonly origins: ReadonlySet<string>;
}

/** An origin as a browser sends it, or undefined when `value` is not one. */
function normalizeOrigin(value: string): string | undefined {
  let u: URL;
  try {
    u = new URL(value);
  } catch {
    return undefined;
  }
  if (u.protocol !== "http:" && u.protocol !== "https:") return undefined;
  if (u.pathname !== "/" || u.search || u.hash || u.username || u.password) return undefined;
  return u.origin;
}

/** FLOCK_CORS_ORIGINS: `*`, or a comma-separated list of origins. Throws on an entry that is not an origin. */
export function parseCorsOrigins(setting: string): CorsPolicy {
  const entries = setting
    .split(",")
    .map((s) => s.trim())
    .filter((s) => s !== "");
  if (entries.length === 0 || entries.includes("*")) return { any: true, origins: new Set() };
  const origins = new Set<string>();
  for (const e of entries) {
    const o = normalizeOrigin(e);
    if (!o) throw new Error(`"${e}" is not an origin (scheme://host[:port], no path)`);
    origins.add(o);
  }
  return { any: false, origins };
}

/** May a page from `origin` use the API? A request without Origin (not from a browser page) always may. */
export function originAllowed(policy: CorsPolicy, origin: string | undefined): boolean {
  return origin === undefined || policy.any || policy.origins.has(origin);
}

const EXPOSE = CORS_EXPOSED_HEADERS.join(", ");
const ANY: Readonly<Record<string, string>> = Object.freeze({
  "Access-Control-Allow-Origin": "*",
  "Access-Control-Expose-Headers": EXPOSE,
});
const VARY_ONLY: Readonly<Record<string, string>> = Object.freeze({ Vary: "Origin" });

/** The CORS headers of an answer to a /v1 request from `origin`. */
export function corsHeaders(policy: CorsPolicy, origin: string | undefined): Readonly<Record<string, string>> {
  if (policy.any) return ANY;
  if (origin === undefined || !policy.origins.has(origin)) return VARY_ONLY;
  return { "Access-Control-Allow-Origin": origin, "Access-Control-Expose-Headers": EXPOSE, Vary: "Origin" };
}

/** The headers of a preflight answer (204): the allowed methods and request headers, and how long to cache them. */
export function preflightHeaders(policy: CorsPolicy, origin: string | undefined): Record<string, string> {
  const base = corsHeaders(policy, origin);
  if (!("Access-Control-Allow-Origin" in base)) return { ...base };
  return {
    ...base,
    "Access-Control-Allow-Methods": METHODS,
    "Access-Control-Allow-Headers": CORS_REQUEST_HEADERS.join(", "),
    "Access-Control-Max-Age": String(CORS_MAX_AGE),
  };
}
