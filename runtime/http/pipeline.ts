// The uWS adapter: every HTTP request goes through here. Synchronously it reads what it needs from the
// request, registers onAborted and starts streaming the body; then it authenticates, validates,
// applies the route's rate limit, runs the handler and writes the answer in one cork.
import { randomBytes } from "node:crypto";
import type { HttpRequest, HttpResponse, TemplatedApp } from "uWebSockets.js";
import { grants, type Principal } from "../auth.ts";
import { ApiError, insufficientScope } from "../errors.ts";
import { Unavailable } from "../circuit.ts";
import type { Logger } from "../log.ts";
import type { Metrics } from "../metrics.ts";
import { POLICIES, type PolicyName } from "../limits/policies.ts";
import type { Services } from "../services.ts";
import { readBody } from "./body.ts";
import { clientIp } from "./client-ip.ts";
import { corsHeaders, preflightHeaders } from "./cors.ts";
import { checkIdempotencyKey, IdempotentRequests, type KeyedRequest, RUNNING_STALE_S } from "./idempotency.ts";
import { bodyStream } from "./stream.ts";
import type { Readable } from "node:stream";
import { NOSNIFF, write } from "./respond.ts";
import { sendStream } from "./send-stream.ts";
import { ranPastBound } from "./slow-requests.ts";
import type { Ctx, Method, Reply, Route } from "./route.ts";
import type { Router } from "./router.ts";
import { parseJson, parseQueryString, parseWith } from "./validate.ts";

export interface HttpState {
  /** Shutting down: every answer closes its connection. */
  draining: boolean;
  /** Requests answered since draining began (the node logs it when it stops). */
  drained: number;
  /**
   * The last part of a SIGTERM's linger (the node still listens) or the backends are being closed: every request
   * answers 503 at once, with a Retry-After that outlasts the listening socket (SHUTDOWN_RETRY_AFTER_S).
   */
  closed: boolean;
  inflight: number;
  /** The Keep-Alive header every answer before a shutdown carries (keepAliveHint), none when the linger is off. */
  keepAlive: string | undefined;
  /** Resolvers waiting for inflight to reach 0. */
  idle: (() => void)[];
}

const JSON_TYPE = { "Content-Type": "application/json" };
/**
 * A shutting-down node's Retry-After: longer than the refusing end of its linger, so a client that waits as told
 * comes back after the listening socket closed (refused at once, never reset in the kernel's accept queue).
 */
export const SHUTDOWN_RETRY_AFTER_S = 2;
/** uWS closes an HTTP connection idle this long (seconds): a hint must never promise more. */
const UWS_IDLE_S = 10;

/**
 * `timeout=N`: whole seconds, at most the linger (so the linger covers it) and below uWS's own idle close; undefined
 * when the linger is under a second (no hint). Built once, into HttpState.keepAlive.
 */
export function keepAliveHint(lingerS: number): string | undefined {
  return lingerS >= 1 ? `timeout=${Math.min(Math.floor(lingerS), UWS_IDLE_S - 1)}` : undefined;
}
const REQ_ID_RE = /^[A-Za-z0-9._-]{1,64}$/;
let reqSeq = 0;
const reqBase = randomBytes(4).toString("hex");

/**
 * One request in flight: what its answer needs, and the answer. Methods rather than per-request closures:
 * the TypeScript loader gives every named closure its own `name` property (a ~250 B property store), held
 * for as long as the request waits (a long poll: its whole time-out).
 */
class Exchange {
  aborted = false;
  readonly abortListeners: (() => void)[] = [];
  routeLabel = "unmatched";
  stream: Readable | undefined;
  /** CORS headers every answer carries (a /v1 path). */
  cors: Readonly<Record<string, string>> | undefined;
  /** The answer must not be stored by any cache: it is a principal's, or may carry a token (see sensitive()). */
  noStore = false;
  /** Who asked, once authenticated (the slow-request log names it). */
  principalId: string | undefined;
  /** The slow-request log has logged this request (runtime/http/slow-requests.ts): once at most. */
  slowNoted = false;
  private childLog: Logger | undefined;

  constructor(
    private readonly res: HttpResponse,
    private readonly svc: Services,
    private readonly metrics: Metrics,
    private readonly state: HttpState,
    readonly method: string,
    readonly path: string,
    readonly ip: string,
    readonly reqId: string,
    private readonly started: number,
  ) {}

  log(): Logger {
    if (!this.childLog) this.childLog = this.svc.log.child({ reqId: this.reqId });
    return this.childLog;
  }

  abort(): void {
    this.aborted = true;
    for (const cb of this.abortListeners) cb();
  }

  /** Run `cb` when the client goes away (at once if it has). */
  whenAborted(cb: () => void): void {
    if (this.aborted) cb();
    else this.abortListeners.push(cb);
  }

  finish(out: Reply, close = false): void {
    const { res, state, method } = this;
    const status = out.status;
    const outHeaders: Record<string, string> = {
      "X-Request-Id": this.reqId,
      ...this.cors,
      ...out.headers,
      [NOSNIFF]: "nosniff",
    };
    if (this.noStore) outHeaders["Cache-Control"] = "no-store";
    // how long a kept-alive connection may sit idle: a SIGTERM'd node lingers that long before it closes any
    if (!state.draining && state.keepAlive !== undefined) outHeaders["Keep-Alive"] = state.keepAlive;
    // A streamed body the handler did not finish reading: close rather than drain it.
    if (this.stream && !this.stream.readableEnded) close = true;
    let body: string | Buffer | undefined;
    if (out.raw) {
      body = out.raw.data;
      outHeaders["Content-Type"] = out.raw.type;
    } else if (out.body !== undefined && status !== 204) {
      const since = performance.now();
      body = JSON.stringify(out.body);
      this.svc.slow.held(this, this.routeLabel, this.principalId, "answer", since);
      Object.assign(outHeaders, JSON_TYPE);
    }
    if (out.stream && !this.aborted) {
      const head = method === "HEAD";
      const onAbort = this.whenAborted.bind(this);
      sendStream(res, { status, headers: outHeaders, close: close || state.draining, head, onAbort }, out.stream);
    } else if (!this.aborted) {
      write(res, { status, headers: outHeaders, body, close: close || state.draining, head: method === "HEAD" });
    } else {
      out.stream?.body.destroy();
    }
    const ms = performance.now() - this.started;
    this.metrics.observe(method, this.routeLabel, status, ms / 1000);
    if (this.svc.log.isLevelEnabled("debug")) {
      this.log().debug({ method, path: this.path, status, ms: Math.round(ms * 10) / 10, ip: this.ip }, "request");
    }
    if (state.draining) state.drained++;
    if (--state.inflight === 0 && state.idle.length > 0) for (const r of state.idle.splice(0)) r();
  }

  fail(err: unknown): void {
    // a backend out of reach answers 503 unavailable + Retry-After, never 500 (runtime/circuit.ts)
    // counted, not logged one by one: the circuit logs its state changes and a summary of refusals (runtime/circuit.ts)
    if (ranPastBound(err)) this.svc.slow.database(this, this.routeLabel, this.principalId);
    err = this.svc.circuits.trip(err) ?? err;
    if (err instanceof Unavailable) this.svc.circuits.of(err.backend)?.refused(`${this.method} ${this.routeLabel}`);
    if (err instanceof ApiError) {
      this.finish(
        { status: err.status, body: err.body(), headers: err.headers },
        err.code === "payload_too_large" || err.code === "unsupported_media_type",
      );
      return;
    }
    this.log().error({ err, method: this.method, path: this.path }, "request failed");
    this.finish({ status: 500, body: { error: "internal", message: "internal server error" } });
  }
}

/** What a handler is given: a class, so every request's context has one fixed shape and shares its `log` getter. */
class RequestCtx implements Ctx {
  readonly method: Method;
  readonly path: string;
  readonly ip: string;
  readonly reqId: string;
  idempotencyKey: string | undefined;
  keyed: KeyedRequest | undefined = undefined;
  readonly stream: Readable | undefined;
  readonly onAborted: (cb: () => void) => void;
  /** Without an Idempotency-Key the work is simply done; the pipeline replaces it on a keyed streamed route. */
  once: (what: string[], make: () => Promise<Reply>) => Promise<Reply> = (_what, make) => make();

  constructor(
    private readonly ex: Exchange,
    readonly params: Record<string, string>,
    readonly query: unknown,
    readonly body: unknown,
    readonly headers: Record<string, string>,
    readonly principal: Principal,
    readonly svc: Services,
    readonly replyHeaders: Record<string, string>,
  ) {
    this.method = ex.method as Method;
    this.path = ex.path;
    this.ip = ex.ip;
    this.reqId = ex.reqId;
    this.stream = ex.stream;
    this.onAborted = ex.whenAborted.bind(ex);
  }

  get log(): Logger {
    return this.ex.log();
  }
}

export function mountHttp(app: TemplatedApp, router: Router, svc: Services, metrics: Metrics, state: HttpState) {
  const keys = new IdempotentRequests(svc);
  app.any("/*", (res: HttpResponse, req: HttpRequest) => {
    const started = performance.now();
    const method = req.getMethod().toUpperCase();
    const path = req.getUrl();
    const rawQuery = req.getQuery() ?? "";
    const headers: Record<string, string> = {};
    req.forEach((k, v) => {
      // a repeated X-Forwarded-For is one list, in order (the rightmost entries are the ones the walk trusts)
      headers[k] = k === "x-forwarded-for" && headers[k] !== undefined ? `${headers[k]},${v}` : v;
    });
    const ip = clientIp(res, headers["x-forwarded-for"], svc.config.TRUST_PROXY);
    const incomingId = headers["x-request-id"];
    const reqId = incomingId && REQ_ID_RE.test(incomingId) ? incomingId : `${reqBase}-${(++reqSeq).toString(36)}`;
    const ex = new Exchange(res, svc, metrics, state, method, path, ip, reqId, started);
    res.onAborted(() => ex.abort());
    if (path.startsWith("/v1/")) {
      if (method === "OPTIONS") {
        state.inflight++;
        ex.routeLabel = "/v1/* preflight";
        ex.finish({ status: 204, headers: preflightHeaders(svc.config.FLOCK_CORS_ORIGINS, headers["origin"]) });
        return;
      }
      ex.cors = corsHeaders(svc.config.FLOCK_CORS_ORIGINS, headers["origin"]);
    }

    state.inflight++;
    if (state.closed) {
      const after = String(SHUTDOWN_RETRY_AFTER_S);
      ex.fail(
        new ApiError(
          "unavailable",
          "this node is shutting down; retry",
          { retry_after: SHUTDOWN_RETRY_AFTER_S },
          { "Retry-After": after },
        ),
      );
      return;
    }
    const match = router.match(method, path);
    ex.noStore = sensitive(method, path, headers, match.kind === "found" ? match.route : undefined);
    let bodyPromise: Promise<Buffer> | undefined;
    let early: ApiError | undefined;
    if (match.kind === "found") {
      ex.routeLabel = match.route.path;
      if (match.route.stream) {
        ex.stream = bodyStream(res, (cb) => ex.abortListeners.push(cb));
      } else if (match.route.body) {
        early = checkBodyHeaders(headers, svc.config.FLOCK_JSON_LIMIT);
        if (!early) bodyPromise = readBody(res, svc.config.FLOCK_JSON_LIMIT, (cb) => ex.whenAborted(cb));
      }
    }

    if (match.kind === "not_found") {
      ex.fail(new ApiError("not_found", `no route for ${method} ${path}`));
      return;
    }
    if (match.kind === "method_not_allowed") {
      const err = new ApiError("method_not_allowed", `${method} is not allowed on ${path}`, {
        allow: match.allow,
      });
      err.headers["Allow"] = match.allow.join(", ");
      ex.fail(err);
      return;
    }
    if (early) {
      ex.fail(early);
      return;
    }
    // a send, traced when tracing is on: its request is the root span of its trace (runtime/tracing.ts)
    const tracing = match.route.traced === true ? svc.tracing : undefined;
    (tracing === undefined
      ? run(match.route, ex, match.params, headers, rawQuery, bodyPromise)
      : tracing.request(method, match.route.path, headers, () =>
          run(match.route, ex, match.params, headers, rawQuery, bodyPromise),
        )
    ).then(
      (out) => ex.finish(out),
      (err) => ex.fail(err),
    );
  });

  async function run(
    route: Route,
    ex: Exchange,
    params: Record<string, string>,
    headers: Record<string, string>,
    rawQuery: string,
    bodyPromise: Promise<Buffer> | undefined,
  ): Promise<Reply> {
    if (route.path.startsWith("/v1/")) svc.limiter.checkBan(ex.ip);
    const principal = route.auth === "none" ? null : await svc.auth.authenticate(headers["authorization"]);
    ex.principalId = principal?.id;
    if (principal && route.auth !== "principal" && principal.kind !== route.auth) {
      throw new ApiError("forbidden", `this endpoint is for ${route.auth}s only`);
    }
    // who may use the route at all first (a moderation route is 404 to anyone but a moderator, whatever the token),
    // then the token's scope, which came with the (cached) token lookup: no round trip
    if (route.admit && principal) await route.admit(principal, svc);
    if (principal && !grants(principal, route.scope ?? "full")) throw insufficientScope(route.scope ?? "full");
    const raw = route.body && bodyPromise ? await bodyPromise : undefined;
    const replyHeaders: Record<string, string> = {};
    // A per-IP limit (the unauthenticated routes) is taken before the input is validated, so invalid requests use
    // it up too; a per-principal limit counts only requests that pass validation (the moments created, and so on).
    const perIp = route.limit !== undefined && POLICIES[route.limit].scope === "ip";
    if (route.limit && perIp) await svc.limiter.enforce(route.limit, ex.ip, ex.ip, replyHeaders);
    let body: unknown;
    let query: unknown;
    const since = performance.now();
    try {
      if (route.body && raw) body = parseWith(route.body, parseJson(raw), "body");
      if (route.query) query = parseWith(route.query, parseQueryString(rawQuery), "query");
    } finally {
      svc.slow.held(ex, ex.routeLabel, ex.principalId, "input", since);
    }
    if (route.limit && !perIp) await enforceOpen(route.limit, principal!.id, ex.ip, replyHeaders);
    const ctx = new RequestCtx(ex, params, query, body, headers, principal!, svc, replyHeaders);
    const key = route.idempotent ? headers["idempotency-key"] : undefined;
    let reply: Reply;
    if (key === undefined) reply = await timed(ex, () => route.handle(ctx));
    else if (route.stream) {
      // a streamed body (an upload) is known only once it is read: the handler reads it, then does its work through
      // ctx.once, which claims the key with what was sent (the SHA-256 of its bytes) as the fingerprint
      checkIdempotencyKey(key);
      ctx.idempotencyKey = key;
      let claimed = false;
      ctx.once = (what, make) => {
        claimed = true;
        return keys.run(principal!, key, [ex.method, ex.path, rawQuery, ...what], RUNNING_STALE_S.streamed, make);
      };
      reply = await route.handle(ctx);
      if (!claimed) throw new Error(`${route.path}: a streamed idempotent route did its work without ctx.once`);
    } else if (route.idempotent === "folded") {
      // a send: the key is claimed in the statement that stores the message (what cannot fold runs as below)
      ctx.idempotencyKey = key;
      ctx.keyed = keys.keyed(principal!, key, [ex.method, ex.path, rawQuery, raw ?? ""], RUNNING_STALE_S.json);
      reply = await timed(ex, () => route.handle(ctx));
    } else {
      ctx.idempotencyKey = key;
      // what was asked: the method, path, query and JSON body
      reply = await keys.run(principal!, key, [ex.method, ex.path, rawQuery, raw ?? ""], RUNNING_STALE_S.json, () =>
        Promise.resolve(timed(ex, () => route.handle(ctx))),
      );
    }
    return { ...reply, headers: { ...replyHeaders, ...reply.headers } };
  }

  /** Runs a handler, timing its synchronous first stretch (up to its first await) for the slow-request log. */
  function timed(ex: Exchange, handle: () => Reply | Promise<Reply>): Reply | Promise<Reply> {
    const since = performance.now();
    try {
      return handle();
    } finally {
      svc.slow.held(ex, ex.routeLabel, ex.principalId, "handler", since);
    }
  }

  /**
   * A per-principal limit fails open while Redis is out (the request goes on unlimited, so what needs only Postgres
   * keeps working); a per-IP limit (unauthenticated routes) fails closed with the 503. See docs/ARCHITECTURE.md.
   */
  async function enforceOpen(
    limit: PolicyName,
    scope: string,
    ip: string,
    headers: Record<string, string>,
  ): Promise<void> {
    if (svc.circuits.redis?.isOpen) return;
    try {
      await svc.limiter.enforce(limit, scope, ip, headers);
    } catch (err) {
      if (svc.circuits.trip(err) === undefined) throw err;
    }
  }
}

/**
 * Whether an answer must carry `Cache-Control: no-store`: the request was authenticated (a route that requires it,
 * or an Authorization header), or it writes under /v1 (an answer that may carry a token: register, sign-in).
 * It overrides a handler's own Cache-Control. Public reads keep theirs.
 */
function sensitive(method: string, path: string, headers: Record<string, string>, route: Route | undefined): boolean {
  if (headers["authorization"] !== undefined) return true;
  if (route && route.auth !== "none") return true;
  return path.startsWith("/v1/") && method !== "GET" && method !== "HEAD" && method !== "OPTIONS";
}

function checkBodyHeaders(headers: Record<string, string>, limit: number): ApiError | undefined {
  const type = (headers["content-type"] ?? "").split(";")[0]!.trim().toLowerCase();
  if (type !== "application/json") {
    return new ApiError(
      "unsupported_media_type",
      "requests with a body must be sent as Content-Type: application/json",
    );
  }
  const len = headers["content-length"];
  if (len !== undefined && Number(len) > limit) {
    return new ApiError("payload_too_large", `request body exceeds ${limit} bytes`, { limit });
  }
  return undefined;
}
