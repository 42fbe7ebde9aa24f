// The parts of one node, each built (and started) here, once, in the order docs/ARCHITECTURE.md states: the
// backends and their circuits, the node's id lease, what checks requests, the per-node parts handlers use, the
// messaging hub, the background passes. runtime/server.ts then mounts the routes and listens; `life` stops it
// all in the reverse order. No part is made lazily elsewhere: handlers and tests reach them on Services.
import { createSocket } from "node:dgram";
import { connect, isIPv6 } from "node:net";
import { Authenticator } from "./auth.ts";
import { Circuits } from "./circuit.ts";
import type { Config } from "./config.ts";
import { connectSql, ping, type Sql } from "./db/client.ts";
import { type EmbeddedPostgres, startEmbeddedPostgres } from "./db/embedded.ts";
import { migrate } from "./db/migrate.ts";
import type { Engines } from "./engines/engines.ts";
import { createMemoryEngines } from "./engines/memory/index.ts";
import { createRedisEngines } from "./engines/redis/index.ts";
import { blobStore } from "./files/index.ts";
import { IdGenerator } from "./ids.ts";
import type { Lifecycle } from "./lifecycle.ts";
import { Limiter, limiterOptions } from "./limits/limiter.ts";
import type { Logger } from "./log.ts";
import { Messaging } from "./messaging/hub.ts";
import { PollPresence } from "./messaging/poll-presence.ts";
import { postgresStores } from "./messaging/core-stores-postgres.ts";
import { SearchGate } from "./search/bounded.ts";
import { SlowRequests } from "./http/slow-requests.ts";
import { Metrics } from "./metrics.ts";
import { NodeLease } from "./node-lease.ts";
import { checkRelease } from "./release-check.ts";
import { thisRelease } from "./release.ts";
import { assetTable } from "./payments/assets.ts";
import { facilitatorClient } from "./payments/facilitator.ts";
import { startClaimSweeper } from "./payments/sweep.ts";
import { PaidAgents } from "./payments/terms.ts";
import type { Core, Services } from "./services.ts";
import { providerKeys } from "./signin/privy.ts";
import { chainClient } from "./signin/wallet.ts";
import { CacheRepair } from "./social/cache-repair.ts";
import { Likes } from "./social/likes.ts";
import { RelationsCache } from "./social/blocks.ts";
import { Realtime } from "./ws/realtime.ts";
import { EventStreams, SSE_HEARTBEAT_MS, SSE_RETRY_MS } from "./ws/event-streams.ts";
import { PostgresRealtimeStore } from "./ws/realtime-store.ts";
import { NodeAnnouncer } from "./events/announcer.ts";
import { McpSessions } from "./mcp/sessions.ts";
import { SelfAddress } from "./self-address.ts";
import { cacheLifetimes } from "./retention/cache-lifetimes.ts";
import { Horizons } from "./retention/horizons.ts";
import { RetentionMaintainer } from "./retention/maintainer.ts";
import { startTracing } from "./tracing.ts";
import { WebPush } from "./push/index.ts";
import { WebhookDispatcher } from "./webhooks/dispatcher.ts";

/** A request's statement ends within this (a send then answers before a 5 s client timeout; see runtime/messaging/hub.ts). */
const STATEMENT_TIMEOUT_MS = 2500;

interface StartedServices {
  svc: Services;
  /** This node's id lease (runtime/node-lease.ts). */
  lease: NodeLease;
  embedded: boolean;
}

/** What a test may set shorter or longer than the node's own (runtime/server.ts, NodeOptions). */
export interface Tuning {
  /** Each statement's bound in ms (STATEMENT_TIMEOUT_MS unless told). */
  statementTimeoutMs?: number;
  /** How long a polling principal stays online after its last poll began (POLL_PRESENCE_GRACE_MS unless told). */
  pollPresenceGraceMs?: number;
}

interface Postgres {
  sql: Sql;
  embedded: EmbeddedPostgres | undefined;
}

/** Why PORT (on HOST) cannot be listened on, in words, with what to do. */
export function listenFailure(host: string, port: number, code?: string): string {
  const what =
    code === "EACCES"
      ? "this user may not listen on it (ports below 1024 need privileges)"
      : code === "EADDRNOTAVAIL"
        ? "the address is not one of this machine's"
        : "the port is in use (another Flock node, or another program) or the address is not one of this machine's";
  return `cannot listen on ${host}:${port}: ${what}; stop the other process or set PORT (and HOST) to others`;
}

/**
 * Fails fast, before anything is created or migrated, when PORT is taken (or HOST is not this machine's, or the port
 * is privileged), without listening on it: a test listen would accept, then reset, clients already connecting to a
 * node restarting on that port. A connection that is answered means a listener holds the port; a UDP bind on the
 * same address answers for the address and the privilege. The real listen still checks (a port bound without
 * listening, or taken in between). PORT 0 picks a free port and needs no check.
 */
export async function checkPortFree(host: string, port: number): Promise<void> {
  if (port === 0) return;
  const wildcard = host === "0.0.0.0" || host === "::" || host === "[::]";
  const target = wildcard ? (host === "0.0.0.0" ? "127.0.0.1" : "::1") : host.replace(/^\[(.*)\]$/, "$1");
  const listening = await new Promise<boolean>((resolve) => {
    const s = connect({ host: target, port });
    s.setTimeout(1_000);
    s.once("connect", () => {
      s.destroy();
      resolve(true);
    });
    s.once("timeout", () => {
      s.destroy();
      resolve(false);
    });
    s.once("error", () => resolve(false));
  });
  if (listening) throw new Error(listenFailure(host, port, "EADDRINUSE"));
  const udp = createSocket(isIPv6(target) ? "udp6" : "udp4");
  await new Promise<void>((resolve, reject) => {
    udp.once("error", (err: NodeJS.ErrnoException) => {
      udp.close();
      // a UDP port in use says nothing about TCP
      if (err.code === "EADDRINUSE") resolve();
      else reject(new Error(listenFailure(host, port, err.code)));
    });
    udp.bind({ address: host.replace(/^\[(.*)\]$/, "$1"), port, exclusive: true }, () => udp.close(() => resolve()));
  });
}

/** The embedded database when there is no DATABASE_URL, and the pool. */
async function openPostgres(config: Config, log: Logger, statementTimeout = STATEMENT_TIMEOUT_MS): Promise<Postgres> {
  let embedded: EmbeddedPostgres | undefined;
  let url = config.DATABASE_URL;
  if (!url) {
    embedded = await startEmbeddedPostgres(config.DATA_DIR);
    url = embedded.url;
    log.info({ dataDir: config.DATA_DIR }, "embedded Postgres (PGlite) started");
  }
  try {
    // PGlite is one backend session however many sockets reach it: two client connections would interleave
    // their statements (and transactions) in it. One connection, pipelined, is the correct embedded pool.
    const pool = embedded ? 1 : config.PG_POOL;
    const statementTimeoutMs = embedded ? undefined : statementTimeout;
    return {
      sql: await connectSql({
        url,
        schema: config.PG_SCHEMA,
        pool,
        statementTimeoutMs,
        oneSession: embedded !== undefined,
      }),
      embedded,
    };
  } catch (err) {
    await embedded?.stop();
    throw err;
  }
}

/** Start every part of a node but its routes and its listening socket, in order, each registered with `life`. */
export async function startServices(
  config: Config,
  log: Logger,
  life: Lifecycle,
  now: () => number,
  tuning: Tuning = {},
): Promise<StartedServices> {
  const { statementTimeoutMs } = tuning;
  // what every part counts into (nothing to start or stop: /metrics and the metrics listener read it)
  const metrics = new Metrics();
  // the backends, and a circuit for each
  // the port is checked first, before the embedded database is created or anything is migrated
  const { sql, embedded } = await life.add(
    "postgres",
    async () => (await checkPortFree(config.HOST, config.PORT), openPostgres(config, log, statementTimeoutMs)),
    async (pg) => {
      await pg.sql.end({ timeout: 5 });
      await pg.embedded?.stop();
    },
  );
  const engines: Engines = await life.add(
    "engines",
    () => {
      // the caches never keep what retention removed for longer than it is kept
      const lifetimes = cacheLifetimes(config.FLOCK_RETENTION_MESSAGES, config.FLOCK_RETENTION_MOMENTS);
      return config.REDIS_URL
        ? createRedisEngines(config.REDIS_URL, config.REDIS_PREFIX, log, lifetimes)
        : createMemoryEngines(now, lifetimes);
    },
    (e) => e.close(),
  );
  const circuits = await life.add(
    "circuits",
    () =>
      new Circuits(
        { postgres: () => ping(sql), ...(engines.kind === "redis" ? { redis: () => engines.ping() } : {}) },
        log,
        metrics.circuitOpen,
      ),
    (c) => c.stop(),
  );
  // the node id: leased, renewed while the node runs, given up after everything else has stopped but the backends
  const lease = await life.add(
    "lease",
    () => NodeLease.take(engines.nodes, log, { fixed: config.NODE_ID }),
    (l) => l.stop(),
  );
  const ids = new IdGenerator(lease.id, now);
  lease.start(ids);
  // the release: announced under the lease; a node that cannot run beside a live one (or on this Redis keyspace)
  // stops here, before it migrates anything (runtime/release.ts)
  await life.add("release", () => checkRelease(engines.nodes, lease, thisRelease(), { now, log }));
  // the schema, brought forward (all pending migrations in one transaction, under an advisory lock: concurrent starts
  // wait; their declared table locks first, and a lock not taken soon steps back to run again: runtime/db/migrate.ts)
  await life.add("migrations", async () => {
    const onRetry = (attempt: number, pauseMs: number, err: unknown) =>
      log.warn(
        { attempt, pauseMs, code: (err as { code?: unknown }).code },
        "migrations stepped back for a lock; running again",
      );
    const applied = await migrate(sql, config.PG_SCHEMA, undefined, { onRetry });
    if (applied.length > 0) log.info({ applied, schema: config.PG_SCHEMA }, "migrations applied");
  });

  // what checks requests
  const auth = await life.add("auth", async () => {
    const a = new Authenticator(sql, engines.pubsub, now);
    await a.start();
    return a;
  });
  const limiter = await life.add("limiter", async () => {
    const l = new Limiter(engines.limits, engines.pubsub, limiterOptions(config, log, metrics), now);
    await l.start();
    return l;
  });
  // the spans of sends, when OTEL_EXPORTER_OTLP_ENDPOINT is set: up before any part that makes one, stopped (its last
  // spans exported) after them all
  const tracing = await life.add(
    "tracing",
    () => startTracing(config, log, lease.id),
    (t) => t?.stop(),
  );
  const horizons = new Horizons(config.FLOCK_RETENTION_MESSAGES, config.FLOCK_RETENTION_MOMENTS, now);
  const announce = new NodeAnnouncer(engines.pubsub);
  const core: Core = {
    config,
    log,
    sql,
    engines,
    ids,
    auth,
    limiter,
    circuits,
    now,
    horizons,
    metrics,
    tracing,
    announce,
  };

  // the per-node parts handlers use
  const files = await life.add("files", () => blobStore(config));
  const keys = await life.add("provider-keys", () => providerKeys(config));
  const chain = await life.add("chain", () => chainClient(config));
  const facilitator = await life.add("facilitator", () => facilitatorClient(config));
  const assets = await life.add("assets", () => assetTable(config));
  const paidAgents = await life.add("paid-agents", async () => {
    const p = new PaidAgents({ ...core, assets });
    await p.start();
    return p;
  });
  const relations = await life.add("relations", async () => {
    const r = new RelationsCache(core);
    await r.start();
    return r;
  });
  const likes = await life.add("likes", () => new Likes(sql));
  const cacheRepair = await life.add(
    "cache-repair",
    () => {
      const r = new CacheRepair({ sql, engines }, log);
      r.start();
      return r;
    },
    (r) => r.stop(),
  );
  // messaging: the wake-up subscription
  const hub = await life.add(
    "hub",
    async () => {
      const h = new Messaging(core, postgresStores(sql));
      h.hiddenSenders = (member) => relations.of(member).then((r) => r.blocking);
      relations.onChange((id) => h.streams.memberships.relationsChanged(id));
      await h.start();
      return h;
    },
    (h) => h.close(),
  );
  // the relays to this node's WebSockets, and the presence of principals that long poll instead (one entry each, on
  // one timer): built after the relays, stopped before them (its entries dropped, offline announced, as the
  // sockets' are when the routes close them)
  const { realtime, pollPresence } = await life.add(
    "realtime",
    async () => {
      const r = new Realtime(core, new PostgresRealtimeStore(sql));
      await r.start();
      const pollPresence = new PollPresence(core, tuning.pollPresenceGraceMs);
      pollPresence.start();
      return { realtime: r, pollPresence };
    },
    async (r) => {
      await r.pollPresence.stop();
      await r.realtime.close();
    },
  );
  // Web Push to people with no open page: the VAPID keys (configured, or shared through Postgres), the cache of who
  // holds subscriptions (kept fresh by pub/sub), the pushes behind sends; stopped after the routes, its pushes drained
  const push = await life.add(
    "push",
    () => WebPush.start(core),
    (p) => p.stop(),
  );
  // agents' webhooks: the endpoints known, the delivery jobs this node holds (each agent's deliveries wake on the hub's
  // waiters); stopped before the hub, its held jobs handed back to the queue
  const webhooks = await life.add(
    "webhooks",
    async () => {
      const w = new WebhookDispatcher({ ...core, hub });
      await w.start();
      return w;
    },
    (w) => w.close(),
  );
  // MCP over streamable HTTP: sessions wake on the hub's waiters and call the node's own API (its address is set at listen)
  const self = new SelfAddress();
  const mcp = await life.add(
    "mcp",
    () => new McpSessions({ log, now, sql, hub }, self),
    (m) => m.close(),
  );
  // Server-Sent Events: sessions of the WebSocket kind writing to HTTP responses; the routes end them as they close the
  // sockets (runtime/server.ts), and this stop ends any opened since
  const slow = new SlowRequests(log, metrics);
  const events = await life.add(
    "event-streams",
    () =>
      new EventStreams({ svc: { ...core, slow }, hub, realtime }, log, {
        perPrincipal: config.FLOCK_SSE_STREAMS,
        heartbeatMs: SSE_HEARTBEAT_MS,
        retryMs: SSE_RETRY_MS,
      }),
    (e) => e.shutdown(),
  );
  const svc: Services = {
    ...core,
    files,
    providerKeys: keys,
    chain,
    facilitator,
    assets,
    paidAgents,
    relations,
    likes,
    cacheRepair,
    hub,
    pollPresence,
    realtime,
    events,
    push,
    webhooks,
    mcp,
    self,
    // searches' share of the pool and their statements' bound, and the slow-request log (nothing to stop: neither
    // holds a connection or a timer)
    search: new SearchGate(sql),
    slow,
  };

  // the background passes: every node checks its streams' positions against Postgres (a publish that never came:
  // runtime/messaging/position-check.ts), and marks abandoned payment claims
  await life.add(
    "position-check",
    () => {
      hub.streams.check.start();
      return hub.streams.check;
    },
    (c) => c.stop(),
  );
  await life.add(
    "claim-sweeper",
    () => startClaimSweeper(svc),
    (stop) => stop(),
  );
  // partitions of messages ahead of time, and what retention drops (one node's pass at a time)
  await life.add(
    "retention",
    async () => {
      // PGlite runs no autovacuum: the maintainer vacuums; on a server, it does where the server's autovacuum is off
      const m = new RetentionMaintainer(sql, horizons, now, log, { vacuum: embedded ? true : "auto" });
      await m.start();
      log.info(m.describe(), "retention");
      return m;
    },
    (m) => m.stop(),
  );
  return { svc, lease, embedded: embedded !== undefined };
}
