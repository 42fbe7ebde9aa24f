// Prometheus metrics of one node (prom-client), after Prometheus' conventions: units in names, `_total` for counters,
// histograms for latencies and sizes. Built once by startServices (runtime/node.ts) and reached as svc.metrics.
// Every labelled series a hot path touches is bound here once (`labels(...)` at construction): no label object is
// built per send, delivery or ack. (prom-client's child still checks and hashes its labels on each call: measured
// here, about 70 ns a counter add and 0.4-0.6 us a histogram observation.) docs/OPERATIONS.md lists them all;
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

/** A Postgres pool's queues: queries waiting for a connection, queries written behind a running one, connections by state. */
export interface PoolLevels {
  waiting: number;
  pipelined: number;
  connections: Record<PoolConnectionState, number>;
}
export type PoolConnectionState = "idle" | "busy" | "reserved" | "connecting" | "closed";
const POOL_STATES: readonly PoolConnectionState[] = ["idle", "busy", "reserved", "connecting", "closed"];

/**
 * What the queue gauges read when scraped (a length or a running count each, so the paths that fill and empty the
 * queues pay nothing). The parts that own the queues set them as they start (runtime/queue-depths.ts); until then, 0.
 */
export interface QueueReaders {
  /** Sends a batcher holds, by kind: waiting for a batch, or in the one being committed. */
  sends(kind: Kind): number;
  /** Acks a batcher holds, likewise. */
  acks(): number;
  /** Members whose acks' cursor copies failed and are held to be sent again (runtime/messaging/stream-reads.ts). */
  cursorCopiesHeld(): number;
  /** The Postgres pool's queues; undefined: not known. */
  postgresPool(): PoolLevels | undefined;
  /** Long polls waiting for a message (registered, nothing to answer yet). */
  longPolls(): number;
  /** Bytes waiting in this node's WebSocket send buffers. */
  websocketBuffered(): number;
  /** Members whose long polls wait before handing out again (their acks failed lately: runtime/messaging/redelivery-backoff.ts). */
  redeliveryBackoff(): number;
  /** Commands sent on the Redis command connection and not answered yet. */
  redisPending(): number;
}

const LATENCY_BUCKETS = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30];
const BACKEND_BUCKETS = [0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5];
const BATCH_BUCKETS = [1, 2, 4, 8, 16, 32, 64, 128, 256];

export class Metrics {
  readonly registry = new Registry();
  private readonly requests: Counter<"method" | "route" | "status">;
  private readonly latency: Histogram<"method" | "route" | "status">;
  private readonly slow: Counter<"route" | "cause">;

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
  /** A send batch's commit (its statement, with any wait for a connection), by kind. */
  readonly sendCommit: Record<Kind, Observe>;
  /** The Postgres statements on the message path. */
  readonly postgres: { sendDirect: Observe; sendGroup: Observe; ack: Observe; streamHeads: Observe };
  /** The Redis calls on the message path and every limited request (the memory engine's, when there is no Redis). */
  readonly redis: { streamAppend: Observe; cursorMerge: Observe; rateLimit: Observe };
  /** Streams a position check found behind Postgres twice in a row, and caught up (runtime/messaging/position-check.ts). */
  readonly streamsBehind: Count;
  /** 1 while a backend's circuit is open (requests needing it answer 503), else 0. */
  readonly circuitOpen: { postgres: Level; redis: Level };
  readonly payments: { settled: Count; failed: { verify: Count; settle: Count; abandoned: Count } };
  /** 429s by policy. */
  readonly rateLimited: Record<PolicyName, Count>;
  /** Bans this node's strikes started; requests refused 403 ip_banned. */
  readonly bans: { started: Count; refused: Count };
  /** WebSocket acks refused while a backend was out, held by their sockets and retried (runtime/ws/ack-retries.ts). */
  readonly ackRetries: Level;
  /** What the queue gauges read (watchQueues). */
  private readonly queues: QueueReaders = {
    sends: () => 0,
    acks: () => 0,
    cursorCopiesHeld: () => 0,
    postgresPool: () => undefined,
    longPolls: () => 0,
    websocketBuffered: () => 0,
    redeliveryBackoff: () => 0,
    redisPending: () => 0,
  };

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

    this.slow = new Counter({
      name: "flock_slow_requests_total",
      help: "Requests that held the event loop over 50 ms in one step (event_loop) or ran a statement past its bound (database), by route",
      labelNames: ["route", "cause"],
      registers,
    });

    const connections = new Gauge({
      name: "flock_connections",
      help: "Connections open on this node: WebSockets, and long polls in progress",
      labelNames: ["transport"],
      registers,
    });
    this.connections = { websocket: gaugeOf(connections, "websocket"), long_poll: gaugeOf(connections, "long_poll") };
    const sent = new Counter({
      name: "flock_messages_sent_total",
      help: "Messages stored and answered 201, by kind (direct, group)",
      labelNames: ["kind"],
      registers,
    });
    this.sent = { direct: counterOf(sent, "direct"), group: counterOf(sent, "group") };
    const delivered = new Counter({
      name: "flock_messages_delivered_total",
      help: "Messages handed to a client, by transport",
      labelNames: ["transport"],
      registers,
    });
    this.delivered = { websocket: counterOf(delivered, "websocket"), long_poll: counterOf(delivered, "long_poll") };
    const redelivered = new Counter({
      name: "flock_messages_redelivered_total",
      help: "Messages handed to a client again (delivered before, not acknowledged), by transport",
      labelNames: ["transport"],
      registers,
    });
    this.redelivered = {
      websocket: counterOf(redelivered, "websocket"),
      long_poll: counterOf(redelivered, "long_poll"),
    };
    this.acks = new Counter({
      name: "flock_message_acks_total",
      help: "Message acknowledgements that took (HTTP and WebSocket)",
      registers,
    });

    const batch = new Histogram({
      name: "flock_send_batch_messages",
      help: "Messages committed together in one send statement, by kind",
      labelNames: ["kind"],
      buckets: BATCH_BUCKETS,
      registers,
    });
    this.sendBatch = { direct: histogramOf(batch, "kind", "direct"), group: histogramOf(batch, "kind", "group") };
    const commit = new Histogram({
      name: "flock_send_commit_duration_seconds",
      help: "A send batch's commit (its statement in Postgres), by kind",
      labelNames: ["kind"],
      buckets: LATENCY_BUCKETS,
      registers,
    });
    this.sendCommit = { direct: histogramOf(commit, "kind", "direct"), group: histogramOf(commit, "kind", "group") };
    const pg = new Histogram({
      name: "flock_postgres_statement_duration_seconds",
      help: "Postgres statements on the message path, by statement",
      labelNames: ["statement"],
      buckets: BACKEND_BUCKETS,
      registers,
    });
    this.postgres = {
      sendDirect: histogramOf(pg, "statement", "send_direct"),
      sendGroup: histogramOf(pg, "statement", "send_group"),
      ack: histogramOf(pg, "statement", "ack"),
      streamHeads: histogramOf(pg, "statement", "stream_heads"),
    };
    this.streamsBehind = new Counter({
      name: "flock_streams_behind_total",
      help: "Streams a position check found behind Postgres at two checks in a row (a publish that never came), then caught up",
      registers,
    });
    const redis = new Histogram({
      name: "flock_redis_command_duration_seconds",
      help: "Redis calls on the message path and the rate limiter, by command (the memory engine's without Redis)",
      labelNames: ["command"],
      buckets: BACKEND_BUCKETS,
      registers,
    });
    this.redis = {
      streamAppend: histogramOf(redis, "command", "stream_append"),
      cursorMerge: histogramOf(redis, "command", "cursor_merge"),
      rateLimit: histogramOf(redis, "command", "rate_limit"),
    };
    const circuit = new Gauge({
      name: "flock_circuit_open",
      help: "1 while a backend's circuit is open (requests that need it answer 503), else 0",
      labelNames: ["backend"],
      registers,
    });
    this.circuitOpen = { postgres: gaugeOf(circuit, "postgres"), redis: gaugeOf(circuit, "redis") };

    const settled = new Counter({
      name: "flock_payments_settled_total",
      help: "Paid messages settled by the facilitator and stored",
      registers,
    });
    const failed = new Counter({
      name: "flock_payments_failed_total",
      help: "Payment claims marked failed, by stage (verify, settle, abandoned)",
      labelNames: ["stage"],
      registers,
    });
    this.payments = {
      settled,
      failed: {
        verify: counterOf(failed, "verify"),
        settle: counterOf(failed, "settle"),
        abandoned: counterOf(failed, "abandoned"),
      },
    };
    const limited = new Counter({
      name: "flock_rate_limit_refusals_total",
      help: "Requests refused 429 by a rate limit, by policy",
      labelNames: ["policy"],
      registers,
    });
    this.rateLimited = Object.fromEntries(Object.keys(POLICIES).map((p) => [p, counterOf(limited, p)])) as Record<
      PolicyName,
      Count
    >;
    const bans = new Counter({
      name: "flock_ip_bans_total",
      help: "IP bans this node's strikes started (clients that kept retrying after 429s)",
      registers,
    });
    const refused = new Counter({
      name: "flock_ip_ban_refusals_total",
      help: "Requests refused 403 ip_banned",
      registers,
    });
    this.bans = { started: bans, refused };

    // the queues a message waits in on this node, read when scraped
    const q = this.queues;
    new Gauge({
      name: "flock_send_queue_depth",
      help: "Sends waiting for their commit, by kind: queued for a batch, or in the batch being committed",
      labelNames: ["kind"],
      registers,
      collect() {
        for (const kind of ["direct", "group"] as const) this.labels(kind).set(q.sends(kind));
      },
    });
    levelOf(
      "flock_ack_queue_depth",
      "Acks waiting for their commit: queued for a batch, or in the batch being committed",
      registers,
      () => q.acks(),
    );
    levelOf(
      "flock_redis_pending_commands",
      "Commands sent on the Redis command connection and not answered yet",
      registers,
      () => q.redisPending(),
    );
    levelOf(
      "flock_cursor_copies_held",
      "Members whose acks' cursor copies failed to reach Redis and are held to be sent again",
      registers,
      () => q.cursorCopiesHeld(),
    );
    const pool = () => q.postgresPool();
    levelOf(
      "flock_postgres_pool_waiting",
      "Postgres queries waiting for a connection of the pool",
      registers,
      () => pool()?.waiting ?? 0,
    );
    levelOf(
      "flock_postgres_pipelined_queries",
      "Postgres queries written to a connection behind the statement it runs, waiting their turn",
      registers,
      () => pool()?.pipelined ?? 0,
    );
    new Gauge({
      name: "flock_postgres_pool_connections",
      help: "The Postgres pool's connections, by state (idle, busy, reserved by a transaction, connecting, closed)",
      labelNames: ["state"],
      registers,
      collect() {
        const p = pool();
        for (const state of POOL_STATES) this.labels(state).set(p?.connections[state] ?? 0);
      },
    });
    levelOf("flock_long_polls_waiting", "Long polls waiting for a message (nothing to answer yet)", registers, () =>
      q.longPolls(),
    );
    levelOf(
      "flock_websocket_buffered_bytes",
      "Bytes waiting in this node's WebSocket send buffers (clients reading slower than they are sent to)",
      registers,
      () => q.websocketBuffered(),
    );
    this.ackRetries = new Gauge({
      name: "flock_ack_retries_pending",
      help: "WebSocket acks refused while a backend was out, held and retried by the node",
      registers,
    });
    levelOf(
      "flock_redelivery_backoff_members",
      "Members whose long polls wait before handing out again (an ack of theirs failed, and none has taken since)",
      registers,
      () => q.redeliveryBackoff(),
    );
  }

  /**
   * Where the queue gauges read from: each part that owns a queue says so as it starts, and calls what this returns
   * as it stops (the gauges then read what they read before: 0 for a queue no part holds).
   */
  watchQueues(readers: Partial<QueueReaders>): () => void {
    const before: Partial<QueueReaders> = {};
    for (const k of Object.keys(readers) as (keyof QueueReaders)[])
      (before as Record<string, unknown>)[k] = this.queues[k];
    Object.assign(this.queues, readers);
    return () => {
      Object.assign(this.queues, before);
    };
  }

  /** A slow request (runtime/http/slow-requests.ts). */
  slowRequest(route: string, cause: "event_loop" | "database"): void {
    this.slow.inc({ route, cause });
  }

  /** One HTTP request answered. */
  observe(method: string, route: string, status: number, seconds: number): void {
    // (bound children would not be cheaper here: prom-client's child hashes its labels on every call too)
    const labels = { method, route, status: String(status) };
    this.requests.inc(labels);
    this.latency.observe(labels, seconds);
  }
}

// Every bound series is in the scrape from the start, at 0 (a rate over a series that appears later misses its first
// increase, and a dashboard or an alert should not find a metric missing on a quiet node).
function counterOf(c: Counter<string>, value: string): Count {
  const child = c.labels(value);
  child.inc(0);
  return child;
}

function gaugeOf(g: Gauge<string>, value: string): Level {
  const child = g.labels(value);
  child.set(0);
  return child;
}

/** A gauge without labels that reads its value when scraped. */
function levelOf(name: string, help: string, registers: Registry[], read: () => number): void {
  new Gauge({
    name,
    help,
    registers,
    collect() {
      this.set(read());
    },
  });
}

function histogramOf(h: Histogram<string>, label: string, value: string): Observe {
  h.zero({ [label]: value });
  return h.labels(value);
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
