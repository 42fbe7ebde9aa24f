// One circuit per backing server (Postgres, Redis). A connection-class failure (the server is down, refusing,
// restarting, or too slow to answer in time) opens its circuit: requests that need that server answer 503
// `unavailable` with Retry-After at once instead of waiting on it, and /readyz says so. While open, a probe
// (`select 1` / PING) runs every PROBE_MS and closes the circuit at its first answer, so service and readiness
// come back within about PROBE_MS of the server's return.
import { ApiError } from "./errors.ts";
import type { Logger } from "./log.ts";
import type { Level } from "./metrics.ts";

type Backend = "postgres" | "redis";

/** Seconds a client is told to wait before retrying during an outage. */
const RETRY_AFTER_S = 1;
const PROBE_MS = 250;
/** A probe not answered within this is a failed probe. */
const PROBE_TIMEOUT_MS = 1000;

const NAMES: Record<Backend, string> = { postgres: "Postgres", redis: "Redis" };

/** While a circuit is open, how often it logs a summary of the requests it refused (one line, by route). */
const SUMMARY_MS = 10_000;

/** The 503 a request gets while `backend` is out (it says which backend, for the refusal summary). */
export class Unavailable extends ApiError {
  constructor(readonly backend: Backend) {
    super(
      "unavailable",
      `${NAMES[backend]} is unavailable; retry shortly`,
      { retry_after: RETRY_AFTER_S },
      { "Retry-After": String(RETRY_AFTER_S) },
    );
  }
}

export function unavailable(backend: Backend): ApiError {
  return new Unavailable(backend);
}

/**
 * postgres.js's errors for a connection lost while a statement was in flight: whether it committed was not heard. The
 * rest of PG_CONNECTION_CODES never reached the server, or were rolled back.
 */
const PG_OUTCOME_UNKNOWN_CODES = new Set([
  "CONNECTION_CLOSED",
  "CONNECTION_DESTROYED",
  "CONNECTION_ENDED",
  "ECONNRESET",
  "EPIPE",
]);

const PG_CONNECTION_CODES = new Set([
  ...PG_OUTCOME_UNKNOWN_CODES,
  "CONNECT_TIMEOUT",
  "ECONNREFUSED",
  "ETIMEDOUT",
  "EHOSTUNREACH",
  "ENETUNREACH",
  "57014", // statement timeout (or cancelled): the statement did not commit
  "57P01", // admin shutdown
  "57P02", // crash shutdown
  "57P03", // cannot connect now (starting up, shutting down)
]);
// the rest are a Redis Cluster's: a shard failing over (CLUSTERDOWN, TRYAGAIN, MASTERDOWN), or the cluster client
// with no node reachable, its slot map not ready, or out of redirections while a shard fails over
const REDIS_MESSAGES =
  /^(Connection is closed\.|Stream isn't writeable|Command timed out|Reached the max retries per request|CLUSTERDOWN|TRYAGAIN|MASTERDOWN|Cluster isn't ready|Failed to refresh slots cache|None of startup nodes is available|Too many Cluster redirections)/;

/** Whether a failed Postgres statement may still have committed (its connection was lost while it ran). */
export function outcomeUnknown(err: unknown): boolean {
  const code = (err as { code?: unknown } | null)?.code;
  return typeof code === "string" && PG_OUTCOME_UNKNOWN_CODES.has(code);
}

/**
 * Which backend an error says is out of reach, or undefined for any other error. ioredis reports an outage to a
 * command only by these messages (a refused or reset socket reaches its 'error' event, never a command); a socket
 * error on a command (ECONNREFUSED ...) is therefore postgres.js's, as are its CONNECTION_* codes and the SQLSTATEs
 * of a server going away or not yet accepting (57014 statement timeout, 57P01-57P03, class 08).
 */
export function outageOf(err: unknown): Backend | undefined {
  if (!(err instanceof Error)) return undefined;
  if (
    err.name === "MaxRetriesPerRequestError" ||
    err.name === "ClusterAllFailedError" ||
    REDIS_MESSAGES.test(err.message)
  )
    return "redis";
  const code = (err as { code?: unknown }).code;
  if (typeof code === "string" && (PG_CONNECTION_CODES.has(code) || /^08[0-9A-Z]{3}$/.test(code))) return "postgres";
  return undefined;
}

/** Whether an error means "a backend is out" (a connection-class failure, or the 503 an open circuit answers). */
export function isOutage(err: unknown): boolean {
  return outageOf(err) !== undefined || (err instanceof ApiError && err.code === "unavailable");
}

export class Circuit {
  private openedAt: number | undefined;
  private timer: NodeJS.Timeout | undefined;
  /** Requests answered 503 because of this backend since the last summary, by route. */
  private refusals = new Map<string, number>();
  private summarizedAt = 0;
  private stopped = false;

  constructor(
    readonly backend: Backend,
    private readonly probe: () => Promise<unknown>,
    private readonly log: Logger,
    /** flock_circuit_open for this backend: 1 while open (runtime/metrics.ts). */
    private readonly state?: Level,
  ) {}

  get isOpen(): boolean {
    return this.openedAt !== undefined;
  }

  /** How long it has been open, in ms (0 while closed). */
  get openMs(): number {
    return this.openedAt === undefined ? 0 : performance.now() - this.openedAt;
  }

  /** Throws the 503 while open. */
  check(): void {
    if (this.openedAt !== undefined) throw unavailable(this.backend);
  }

  /**
   * A request was answered 503 because of this backend: counted, and logged as one summary line every SUMMARY_MS
   * while the circuit is open and once when it closes, never a line per request (an outage refuses thousands).
   */
  refused(route: string): void {
    this.refusals.set(route, (this.refusals.get(route) ?? 0) + 1);
    if (
      this.refusals.size > 200 ||
      (this.openedAt === undefined && performance.now() - this.summarizedAt >= SUMMARY_MS)
    )
      this.summarize();
  }

  private summarize(): void {
    this.summarizedAt = performance.now();
    if (this.refusals.size === 0) return;
    const refused = Object.fromEntries(this.refusals);
    this.refusals = new Map();
    this.log.warn({ backend: this.backend, refused }, "requests refused while the backend was unavailable");
  }

  /** A connection-class failure was seen: open (once) and probe until the server answers. */
  open(err: unknown): void {
    if (this.openedAt !== undefined || this.stopped) return;
    this.openedAt = performance.now();
    this.summarizedAt = this.openedAt;
    this.state?.set(1);
    this.log.warn(
      { backend: this.backend, err: err instanceof Error ? err.message : String(err) },
      "circuit open: backend unavailable",
    );
    this.schedule();
  }

  stop(): void {
    this.stopped = true;
    clearTimeout(this.timer);
  }

  private schedule(): void {
    if (this.stopped) return;
    this.timer = setTimeout(() => void this.tryClose(), PROBE_MS);
    this.timer.unref();
  }

  private async tryClose(): Promise<void> {
    let timer: NodeJS.Timeout | undefined;
    try {
      await Promise.race([
        this.probe(),
        new Promise((_, reject) => {
          timer = setTimeout(() => reject(new Error("probe timed out")), PROBE_TIMEOUT_MS);
        }),
      ]);
    } catch {
      if (performance.now() - this.summarizedAt >= SUMMARY_MS) this.summarize();
      this.schedule();
      return;
    } finally {
      clearTimeout(timer);
    }
    const ms = Math.round(performance.now() - (this.openedAt ?? 0));
    this.openedAt = undefined;
    this.state?.set(0);
    this.log.info({ backend: this.backend, ms }, "circuit closed: backend answers again");
    this.summarize();
  }
}

/** The node's circuits. A memory engine has no Redis and no Redis circuit. */
export class Circuits {
  readonly postgres: Circuit;
  readonly redis: Circuit | undefined;

  constructor(
    probes: { postgres: () => Promise<unknown>; redis?: () => Promise<unknown> },
    log: Logger,
    states?: Record<Backend, Level>,
  ) {
    this.postgres = new Circuit("postgres", probes.postgres, log, states?.postgres);
    this.redis = probes.redis ? new Circuit("redis", probes.redis, log, states?.redis) : undefined;
  }

  /** If `err` is a connection-class failure: open its backend's circuit and answer the 503 to give instead. */
  trip(err: unknown): ApiError | undefined {
    const backend = outageOf(err);
    if (backend === undefined) return undefined;
    (backend === "postgres" ? this.postgres : this.redis)?.open(err);
    return unavailable(backend);
  }

  of(backend: Backend): Circuit | undefined {
    return backend === "postgres" ? this.postgres : this.redis;
  }

  stop(): void {
    this.postgres.stop();
    this.redis?.stop();
  }
}
