// The operational endpoints outside /v1: liveness and readiness.
import { z } from "zod";

/** GET /healthz: the process answers. */
export const HealthResponse = z.object({ status: z.literal("ok") });

/** Each backend's state as /readyz saw it. */
export const ReadyChecks = z.record(z.string(), z.enum(["ok", "error"]));

/** GET /readyz: every backend answered. */
export const ReadyResponse = z.object({ status: z.literal("ready"), checks: ReadyChecks });

/** GET /readyz when a backend did not answer: the error shape with the checks. */
export const NotReadyBody = z
  .object({ error: z.literal("unavailable"), message: z.string(), checks: ReadyChecks })
  .catchall(z.unknown());
