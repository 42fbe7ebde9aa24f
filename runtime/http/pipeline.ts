// The uWS adapter: every HTTP request goes through here. Synchronously it reads what it needs from the
// request, registers onAborted and starts streaming the body; then it authenticates, validates,
// applies the route's rate limit, runs the handler and writes the answer in one cork.
import { randomBytes } from "node:crypto";
import type { HttpRequest, HttpResponse, TemplatedApp } from "uWebSockets.js";
import { ApiError } from "../errors.ts";
import type { Logger } from "../log.ts";
import type { Metrics } from "../metrics.ts";
import { POLICIES } from "../limits/policies.ts";
import type { Services } from "../services.ts";
import { readBody } from "./body.ts";
import { clientIp } from "./client-ip.ts";
import { bodyStream } from "./stream.ts";
import type { Readable } from "node:stream";
import { write } from "./respond.ts";
import { sendStream } from "./send-stream.ts";
import type { Ctx, Method, Reply, Route } from "./route.ts";
import type { Router } from "./router.ts";
import { parseJson, parseWith } from "./validate.ts";

export interface HttpState {
  draining: boolean;
  inflight: number;
  /** Resolvers waiting for inflight to reach 0. */
  idle: (() => void)[];
}

const JSON_TYPE = { "Content-Type": "application/json" };
const REQ_ID_RE = /^[A-Za-z0-9._-]{1,64}$/;
let reqSeq = 0;
const reqBase = randomBytes(4).toString("hex");

export function mountHttp(app: TemplatedApp, router: Router, svc: Services, metrics: Metrics, state: HttpState) {
  app.any("/*", (res: HttpResponse, req: HttpRequest) => {
    const started = performance.now();
    const method = req.getMethod().toUpperCase();
    const path = req.getUrl();
    const rawQuery = req.getQuery() ?? "";
    const headers: Record<string, string> = {};
    req.forEach((k, v) => {
      headers[k] = v;
    });
    const ip = clientIp(res, headers["x-forwarded-for"], svc.config.TRUST_PROXY);
    const incomingId = headers["x-request-id"];
    const reqId = incomingId && REQ_ID_RE.test(incomingId) ? incomingId : `${reqBase}-${(++reqSeq).toString(36)}`;
    const io = { aborted: false, onAbort: [] as (() => void)[] };
    res.onAborted(() => {
      io.aborted = true;
      for (const cb of io.onAbort) cb();
    });

    state.inflight++;
    const match = router.match(method, path);
    let routeLabel = "unmatched";
    let bodyPromise: Promise<Buffer> | undefined;
    let stream: Readable | undefined;
    let early: ApiError | undefined;
    if (match.kind === "found") {
      routeLabel = match.route.path;
      if (match.route.stream) {
        stream = bodyStream(res, (cb) => io.onAbort.push(cb));
      } else if (match.route.body) {
        early = checkBodyHeaders(headers, svc.config.FLOCK_JSON_LIMIT);
        if (!early) bodyPromise = readBody(res, svc.config.FLOCK_JSON_LIMIT);
      }
    }

    const finish = (out: Reply, close = false) => {
      const status = out.status;
      const outHeaders: Record<string, string> = { "X-Request-Id": reqId, ...out.headers };
      // A streamed body the handler did not finish reading: close rather than drain it.
      if (stream && !stream.readableEnded) close = true;
      let body: string | Buffer | undefined;
      if (out.raw) {
        body = out.raw.data;
        outHeaders["Content-Type"] = out.raw.type;
      } else if (out.body !== undefined && status !== 204) {
        body = JSON.stringify(out.body);
        Object.assign(outHeaders, JSON_TYPE);
      }
      if (out.stream && !io.aborted) {
        const onAbort = (cb: () => void) => io.onAbort.push(cb);
        const head = method === "HEAD";
        sendStream(res, { status, headers: outHeaders, close: close || state.draining, head, onAbort }, out.stream);
      } else if (!io.aborted) {
        write(res, { status, headers: outHeaders, body, close: close || state.draining, head: method === "HEAD" });
      } else {
        out.stream?.body.destroy();
      }
      const ms = performance.now() - started;
      metrics.observe(method, routeLabel, status, ms / 1000);
      if (svc.log.isLevelEnabled("debug")) log().debug({ method, path, status, ms: Math.round(ms * 10) / 10, ip }, "request");
      if (--state.inflight === 0 && state.idle.length > 0) for (const r of state.idle.splice(0)) r();
    };

    const fail = (err: unknown, log: () => Logger) => {
      if (err instanceof ApiError) {
        finish({ status: err.status, body: err.body(), headers: err.headers }, err.code === "payload_too_large" || err.code === "unsupported_media_type");
        return;
      }
      log().error({ err, method, path }, "request failed");
      finish({ status: 500, body: { error: "internal", message: "internal server error" } });
    };

    let childLog: Logger | undefined;
    const log = () => {
      if (!childLog) childLog = svc.log.child({ reqId });
      return childLog;
    };

    if (match.kind === "not_found") {
      fail(new ApiError("not_found", `no route for ${method} ${path}`), log);
      return;
    }
    if (match.kind === "method_not_allowed") {
      const err = new ApiError("method_not_allowed", `${method} is not allowed on ${path}`, {
        allow: match.allow,
      });
      err.headers["Allow"] = match.allow.join(", ");
      fail(err, log);
      return;
    }
    if (early) {
      fail(early, log);
      return;
    }
    const route = match.route;
    run(route, {
      method: method as Method,
      path,
      params: match.params,
      headers,
      ip,
      reqId,
      rawQuery,
      bodyPromise,
      stream,
      log,
      onAborted: (cb: () => void) => {
        if (io.aborted) cb();
        else io.onAbort.push(cb);
      },
    }).then(finish, (err) => fail(err, log));
  });

  async function run(
    route: Route,
    r: {
      method: Method;
      path: string;
      params: Record<string, string>;
      headers: Record<string, string>;
      ip: string;
      reqId: string;
      rawQuery: string;
      bodyPromise: Promise<Buffer> | undefined;
      stream: Readable | undefined;
      log: () => Logger;
      onAborted: (cb: () => void) => void;
    },
  ): Promise<Reply> {
    if (route.path.startsWith("/v1/")) svc.limiter.checkBan(r.ip);
    const principal = route.auth === "none" ? null : await svc.auth.authenticate(r.headers["authorization"]);
    if (principal && route.auth !== "principal" && principal.kind !== route.auth) {
      throw new ApiError("forbidden", `this endpoint is for ${route.auth}s only`);
    }
    let body: unknown;
    if (route.body && r.bodyPromise) body = parseWith(route.body, parseJson(await r.bodyPromise), "body");
    let query: unknown;
    if (route.query) query = parseWith(route.query, Object.fromEntries(new URLSearchParams(r.rawQuery)), "query");
    const replyHeaders: Record<string, string> = {};
    if (route.limit) {
      const scope = POLICIES[route.limit].scope === "ip" ? r.ip : principal!.id;
      await svc.limiter.enforce(route.limit, scope, r.ip, replyHeaders);
    }
    const ctx: Ctx = {
      method: r.method,
      path: r.path,
      params: r.params,
      query,
      body,
      headers: r.headers,
      ip: r.ip,
      reqId: r.reqId,
      get log() {
        return r.log();
      },
      principal: principal!,
      svc,
      stream: r.stream,
      onAborted: r.onAborted,
      replyHeaders,
    };
    const reply = await route.handle(ctx);
    return { ...reply, headers: { ...replyHeaders, ...reply.headers } };
  }
}

function checkBodyHeaders(headers: Record<string, string>, limit: number): ApiError | undefined {
  const type = (headers["content-type"] ?? "").split(";")[0]!.trim().toLowerCase();
  if (type !== "application/json") {
    return new ApiError("unsupported_media_type", "requests with a body must be sent as Content-Type: application/json");
  }
  const len = headers["content-length"];
  if (len !== undefined && Number(len) > limit) {
    return new ApiError("payload_too_large", `request body exceeds ${limit} bytes`, { limit });
  }
  return undefined;
}
