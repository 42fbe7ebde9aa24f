// Liveness, readiness (Postgres and the engines answer) and Prometheus metrics, outside /v1. On this, the public
// port, /metrics answers only behind FLOCK_METRICS_TOKEN and is not found without one; the metrics listener
// (FLOCK_METRICS_PORT, runtime/metrics-listener.ts) serves it without a token on its own, loopback, address.
import { createHash, timingSafeEqual } from "node:crypto";
import type { Circuit } from "../runtime/circuit.ts";
import { ping } from "../runtime/db/client.ts";
import { ApiError, unauthorized } from "../runtime/errors.ts";
import { defineRoute, ok, type Route } from "../runtime/http/route.ts";
import type { Metrics } from "../runtime/metrics.ts";

export function healthRoutes(metrics: Metrics, draining: () => boolean = () => false): Route[] {
  const healthz = defineRoute({
    method: "GET",
    path: "/healthz",
    auth: "none",
    handle: () => ok({ status: "ok" }),
  });

  const readyz = defineRoute({
    method: "GET",
    path: "/readyz",
    auth: "none",
    async handle({ svc }) {
      // a node shutting down (lingering on a SIGTERM) is not ready: a balancer stops sending it new connections,
      // while it still answers what arrives
      if (draining()) {
        throw new ApiError(
          "unavailable",
          "not ready: shutting down",
          { checks: { shutdown: "draining" } },
          { "Retry-After": "1" },
        );
      }
      // an open circuit answers at once (its probe closes it within ~250 ms of the server's return); a closed one
      // is checked live, and a connection-class failure opens it
      const check = async (f: () => Promise<unknown>, circuit: Circuit | undefined) => {
        if (circuit?.isOpen) return "error";
        try {
          await withTimeout(f(), 1500);
          return "ok";
        } catch (err) {
          svc.circuits.trip(err);
          return "error";
        }
      };
      const [postgres, engine] = await Promise.all([
        check(() => ping(svc.sql), svc.circuits.postgres),
        check(() => svc.engines.ping(), svc.circuits.redis),
      ]);
      const checks = { postgres, [svc.engines.kind]: engine };
      if (postgres !== "ok" || engine !== "ok") {
        throw new ApiError("unavailable", "not ready", { checks });
      }
      return ok({ status: "ready", checks });
    },
  });

  const prom = defineRoute({
    method: "GET",
    path: "/metrics",
    auth: "none",
    async handle({ svc, headers, method, path }) {
      const token = svc.config.FLOCK_METRICS_TOKEN;
      // nothing is served openly here: without a token the route answers as one that does not exist
      if (token === undefined) throw new ApiError("not_found", `no route for ${method} ${path}`);
      if (!bearerIs(headers["authorization"], token)) {
        throw unauthorized("/metrics needs the bearer token FLOCK_METRICS_TOKEN names");
      }
      return { status: 200, raw: { type: metrics.registry.contentType, data: await metrics.registry.metrics() } };
    },
  });

  return [healthz, readyz, prom];
}

/** Whether `header` is `Bearer <token>`, compared in constant time (digests of equal length). */
function bearerIs(header: string | undefined, token: string): boolean {
  const m = /^Bearer (.+)$/i.exec(header ?? "");
  if (!m) return false;
  const digest = (v: string) => createHash("sha256").update(v).digest();
  return timingSafeEqual(digest(m[1]!), digest(token));
}

function withTimeout<T>(p: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const t = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`timed out after ${ms} ms`)), ms);
  });
  return Promise.race([p, t]).finally(() => clearTimeout(timer));
}
