// Prometheus metrics of one node (prom-client), after Prometheus' conventions: units in names, `_total` for counters,
// histograms for latencies and sizes. Built once by startServices (runtime/node.ts) and reached as svc.metrics.
// Every labelled series a hot path touches is bound here once (`labels(...)` at construction), so counting a send,
// a delivery or an ack is one add on a held object, never a label lookup. docs/OPERATIONS.md lists them all;
// deploy/grafana/flock.json and deploy/prometheus/alerts.yml read them (test/metrics-operators.test.ts checks both).
import { Counter, collectDefaultMetrics, Gauge, Histogram, Registry } from "prom-client";
import { POLICIES, type PolicyName } from "./limits/policies.ts";

/** What a hot path counts with: a series bound once. */
export interface Count {
  inc(n?: number): void;
}

/** What a hot path observes a duration or a size with: a series bound once. */
export interface Observe {
  observe(value: number): void;
}

/** A level that goes up and down (connections open, a circuit's state). */
export interface Level {
  inc(n?: number): void;
  dec(n?: number): void;
  set(value: number): void;
}

type Transport = "websocket" | "long_poll";
type Kind = "direct" | "group";

const LATENCY_BUCKETS = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30];
const BACKEND_BUCKETS = [0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5];
const BATCH_BUCKETS = [1, 2, 4, 8, 16, 32, 64, 128, 256];

interface HttpSeries {
  requests: Count;
  latency: Observe;
}

export class Metrics {
  readonly registry = new Registry();
  private readonly requests: Counter<"method" | "route" | "status">;
  private readonly latency: Histogram<"method" | "route" | "status">;
  /** HTTP series by "method route status", bound on first use (route patterns and statuses are few). */
  private readonly http = new Map<string, HttpSeries>();

  /** Sockets and long polls open on this node now. */
  readonly connections: Record<Transport, Level>;
  /** Messages stored (answered 201), paid ones among the direct. */
  readonly sent: Record<Kind, Count>;
  /** Messages handed to a client: written to a WebSocket, or answered to a long poll. */
  readonly delivered: Record<Transport, Count>;
  /** Of those, the ones handed out before and not acknowledged since (delivery_count of 2 or more). */
  readonly redelivered: Record<Transport, Count>;
  /** Acknowledgements that took (over HTTP or a WebSocket; a cumulative ack counts once). */
  readonly acks: Count;
  /** Messages per send commit (one statement), by kind. */
  readonly sendBatch: Record<Kind, Observe>;
  /** A send batch's commit: recorded in flight, then its statement, by kind. */
  readonly sendCommit: Record<Kind, Observe>;
  /** The Postgres statements on the message path. */
  readonly postgres: { sendDirect: Observe; sendGroup: Observe; ack: Observe };
  /** The Redis calls on the message path and every limited request (the memory engine's, when there is no Redis). */
  readonly redis: { streamAppend: Observe; inflightAdd: Observe; cursorMerge: Observe; rateLimit: Observe };
  /** 1 while a backend's circuit is open (requests needing it answer 503), else 0. */
  readonly circuitOpen: { postgres: Level; redis: Level };
  readonly payments: { settled: Count; failed: { verify: Count; settle: Count; abandoned: Count } };
  /** 429s by policy. */
  readonly rateLimited: Record<PolicyName, Count>;
  /** Bans this node's strikes started; requests refused 403 ip_banned. */
  readonly bans: { started: Count; refused: Count };

  constructor() {
    const registers = [this.registry];
    // the event loop's lag comes with these: flock_nodejs_eventloop_lag_seconds, ..._p99_seconds and the rest
    collectDefaultMetrics({ register: this.registry, prefix: "flock_" });
    this.requests = new Counter({
      name: "flock_http_requests_total",
      help: "HTTP requests answered, by method, route pattern and status",
      labelNames: ["method", "route", "status"],
      registers,
    });
    this.latency = new Histogram({
      name: "flock_http_request_duration_seconds",
      help: "HTTP request latency from first byte read to response written",
      labelNames: ["method", "route", "status"],
      buckets: LATENCY_BUCKETS,
      registers,
    });

    const connections = new Gauge({ name: "flock_connections", help: "Connections open on this node: WebSockets, and long polls in progress", labelNames: ["transport"], registers });
    this.connections = { websocket: connections.labels("websocket"), long_poll: connections.labels("long_poll") };
    const sent = new Counter({ name: "flock_messages_sent_total", help: "Messages stored and answered 201, by kind (direct, group)", labelNames: ["kind"], registers });
    this.sent = { direct: sent.labels("direct"), group: sent.labels("group") };
    const delivered = new Counter({ name: "flock_messages_delivered_total", help: "Messages handed to a client, by transport", labelNames: ["transport"], registers });
    this.delivered = { websocket: delivered.labels("websocket"), long_poll: delivered.labels("long_poll") };
    const redelivered = new Counter({
      name: "flock_messages_redelivered_total",
      help: "Messages handed to a client again (delivered before, not acknowledged), by transport",
      labelNames: ["transport"],
      registers,
    });
    this.redelivered = { websocket: redelivered.labels("websocket"), long_poll: redelivered.labels("long_poll") };
    this.acks = new Counter({ name: "flock_message_acks_total", help: "Message acknowledgements that took (HTTP and WebSocket)", registers });

    const batch = new Histogram({ name: "flock_send_batch_messages", help: "Messages committed together in one send statement, by kind", labelNames: ["kind"], buckets: BATCH_BUCKETS, registers });
    this.sendBatch = { direct: batch.labels("direct"), group: batch.labels("group") };
    const commit = new Histogram({
      name: "flock_send_commit_duration_seconds",
      help: "A send batch's commit (recorded in flight, then stored in Postgres), by kind",
      labelNames: ["kind"],
      buckets: LATENCY_BUCKETS,
      registers,
    });
    this.sendCommit = { direct: commit.labels("direct"), group: commit.labels("group") };
    const pg = new Histogram({ name: "flock_postgres_statement_duration_seconds", help: "Postgres statements on the message path, by statement", labelNames: ["statement"], buckets: BACKEND_BUCKETS, registers });
    this.postgres = { sendDirect: pg.labels("send_direct"), sendGroup: pg.labels("send_group"), ack: pg.labels("ack") };
    const redis = new Histogram({
      name: "flock_redis_command_duration_seconds",
      help: "Redis calls on the message path and the rate limiter, by command (the memory engine's without Redis)",
      labelNames: ["command"],
      buckets: BACKEND_BUCKETS,
      registers,
    });
    this.redis = { streamAppend: redis.labels("stream_append"), inflightAdd: redis.labels("inflight_add"), cursorMerge: redis.labels("cursor_merge"), rateLimit: redis.labels("rate_limit") };
    const circuit = new Gauge({ name: "flock_circuit_open", help: "1 while a backend's circuit is open (requests that need it answer 503), else 0", labelNames: ["backend"], registers });
    this.circuitOpen = { postgres: circuit.labels("postgres"), redis: circuit.labels("redis") };
    this.circuitOpen.postgres.set(0);
    this.circuitOpen.redis.set(0);

    const settled = new Counter({ name: "flock_payments_settled_total", help: "Paid messages settled by the facilitator and stored", registers });
    const failed = new Counter({ name: "flock_payments_failed_total", help: "Payment claims marked failed, by stage (verify, settle, abandoned)", labelNames: ["stage"], registers });
    this.payments = { settled, failed: { verify: failed.labels("verify"), settle: failed.labels("settle"), abandoned: failed.labels("abandoned") } };
    const limited = new Counter({ name: "flock_rate_limit_refusals_total", help: "Requests refused 429 by a rate limit, by policy", labelNames: ["policy"], registers });
    this.rateLimited = Object.fromEntries(Object.keys(POLICIES).map((p) => [p, limited.labels(p)])) as Record<PolicyName, Count>;
    const bans = new Counter({ name: "flock_ip_bans_total", help: "IP bans this node's strikes started (clients that kept retrying after 429s)", registers });
    const refused = new Counter({ name: "flock_ip_ban_refusals_total", help: "Requests refused 403 ip_banned", registers });
    this.bans = { started: bans, refused };
  }

  /** One HTTP request answered. */
  observe(method: string, route: string, status: number, seconds: number): void {
    const key = `${method} ${route} ${status}`;
    let s = this.http.get(key);
    if (s === undefined) {
      const labels = [method, route, String(status)];
      s = { requests: this.requests.labels(...labels), latency: this.latency.labels(...labels) };
      this.http.set(key, s);
    }
    s.requests.inc();
    s.latency.observe(seconds);
  }
}

/** Seconds since `start` (a performance.now()). */
export const since = (start: number): number => (performance.now() - start) / 1000;

/** Run `f`, and observe how long it took (in seconds) when it succeeds. */
export async function timed<T>(h: Observe, f: () => Promise<T>): Promise<T> {
  const started = performance.now();
  const out = await f();
  h.observe(since(started));
  return out;
}
