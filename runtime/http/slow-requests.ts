// The slow-request log (issue 50): a request that held the event loop past HELD_MS in one of its synchronous steps
// (reading its input against the schema, the handler's own first stretch, writing its answer), or whose statement ran
// past its bound, is logged once at warn with its route and principal, never its body, query or token, and counted
// in /metrics as flock_slow_requests_total{route, cause}, cause "event_loop" or "database". So an operator sees the
// next input that costs too much before an attacker finds it (docs/ARCHITECTURE.md, "How a request's cost is
// bounded"). The checks are two clock reads a step.
import { ApiError, type ErrorCode } from "../errors.ts";
import type { Logger } from "../log.ts";
import type { Metrics } from "../metrics.ts";

/** A synchronous step holding the event loop longer than this is a slow request. */
export const HELD_MS = 50;

/** An answer given because a statement ran past its bound (a search's: runtime/search/bounded.ts). */
export class PastBound extends ApiError {
  constructor(code: ErrorCode, message: string, extra: Record<string, unknown>, headers: Record<string, string>) {
    super(code, message, extra, headers);
  }
}

/** A statement cancelled by its statement_timeout (SQLSTATE 57014), or an answer that says so. */
export const ranPastBound = (err: unknown): boolean =>
  err instanceof PastBound || (err as { code?: unknown } | null)?.code === "57014";

/** A request or a frame, which is logged once as slow at most. */
export interface Noted {
  slowNoted?: boolean;
}

export class SlowRequests {
  constructor(
    private readonly log: Logger,
    private readonly metrics: Metrics,
  ) {}

  /**
   * `step` of `req` (a request to `route`) held the event loop since `since` (performance.now()): logged and counted
   * if past HELD_MS, and then `req` is noted, so a request with several slow steps is logged and counted once (null:
   * a step that is the whole of what it times, such as a WebSocket frame's decoding and check).
   */
  held(req: Noted | null, route: string, principal: string | undefined, step: string, since: number): void {
    if (req?.slowNoted) return;
    const ms = performance.now() - since;
    if (ms <= HELD_MS) return;
    if (req) req.slowNoted = true;
    this.metrics.slowRequest(route, "event_loop");
    this.log.warn({ route, principal, step, ms: Math.round(ms) }, "slow request: held the event loop");
  }

  /** A request to `route` had a statement cancelled at its bound (logged and counted once, as above). */
  database(req: Noted, route: string, principal: string | undefined): void {
    if (req.slowNoted) return;
    req.slowNoted = true;
    this.metrics.slowRequest(route, "database");
    this.log.warn({ route, principal }, "slow request: a statement ran past its bound");
  }
}
