// Builds one Flock node from a config: Postgres (real or embedded), migrations, engines, services,
// routes, the uWS app; and takes it down again gracefully.
import { allRoutes } from "../handlers/index.ts";
import { Authenticator } from "./auth.ts";
import { Circuits } from "./circuit.ts";
import { CacheRepair } from "./social/cache-repair.ts";
import type { Config } from "./config.ts";
import { connectSql, type Sql } from "./db/client.ts";
import { type EmbeddedPostgres, startEmbeddedPostgres } from "./db/embedded.ts";
import { migrate } from "./db/migrate.ts";
import type { Engines } from "./engines/engines.ts";
import { createMemoryEngines } from "./engines/memory/index.ts";
import { createRedisEngines } from "./engines/redis/index.ts";
import { type HttpState, mountHttp } from "./http/pipeline.ts";
import { Router } from "./http/router.ts";
import { IdGenerator } from "./ids.ts";
import { Limiter } from "./limits/limiter.ts";
import type { Logger } from "./log.ts";
import { Metrics } from "./metrics.ts";
import { NodeLease } from "./node-lease.ts";
import { messaging } from "./messaging/hub.ts";
import { Reconciler } from "./messaging/reconcile.ts";
import { startClaimSweeper } from "./payments/sweep.ts";
import type { Services } from "./services.ts";
import { listenExclusive, loadUws } from "./uws.ts";
import { mountWs } from "./ws/server.ts";

export class StartupError extends Error {}

const listenFailure = (host: string, port: number) =>
  `cannot listen on ${host}:${port}: the port is in use (another Flock node, or another program) or the address is ` +
  `not one of this machine's; stop the other process or set PORT (and HOST) to others`;

/** A request's statement ends within this (a send then answers before a 5 s client timeout; see runtime/messaging/hub.ts). */
const STATEMENT_TIMEOUT_MS = 2500;

export interface RunningNode {
  port: number;
  svc: Services;
  /** This node's id lease (runtime/node-lease.ts). */
  lease: NodeLease;
  close(): Promise<void>;
}

export interface NodeOptions {
  now?: () => number;
}

export async function startNode(config: Config, log: Logger, opts: NodeOptions = {}): Promise<RunningNode> {
  const { uws, native, binding } = loadUws();
  if (!native) {
    if (!config.FLOCK_ALLOW_UWS_FALLBACK) {
      throw new StartupError(
        "uWebSockets.js native binding did not load; refusing to run on the slow pure-JS fallback " +
          "(set FLOCK_ALLOW_UWS_FALLBACK=1 to allow it)",
      );
    }
    log.warn({ binding }, "uWebSockets.js running on the pure-JS fallback");
  } else {
    log.info({ binding: binding.split(/[/\\]/).pop() }, "uWebSockets.js native binding loaded");
  }

  const cleanups: (() => Promise<void>)[] = [];
  const undo = async () => {
    for (const c of cleanups.reverse()) await c().catch(() => {});
  };
  try {
    let embedded: EmbeddedPostgres | undefined;
    let url = config.DATABASE_URL;
    if (!url) {
      embedded = await startEmbeddedPostgres(config.DATA_DIR);
      cleanups.push(() => embedded!.stop());
      url = embedded.url;
      log.info({ dataDir: config.DATA_DIR }, "embedded Postgres (PGlite) started");
    }
    // PGlite is one backend session however many sockets reach it: two client connections would interleave
    // their statements (and transactions) in it. One connection, pipelined, is the correct embedded pool.
    const pool = embedded ? 1 : config.PG_POOL;
    const sql: Sql = await connectSql({ url, schema: config.PG_SCHEMA, pool, statementTimeoutMs: embedded ? undefined : STATEMENT_TIMEOUT_MS });
    cleanups.push(() => sql.end({ timeout: 5 }));
    const applied = await migrate(sql, config.PG_SCHEMA);
    if (applied.length > 0) log.info({ applied, schema: config.PG_SCHEMA }, "migrations applied");

    const engines: Engines = config.REDIS_URL
      ? await createRedisEngines(config.REDIS_URL, config.REDIS_PREFIX, log)
      : createMemoryEngines();
    cleanups.push(() => engines.close());
    // the node id: leased, renewed while the node runs, given up after everything else has stopped but the engines
    const lease = await NodeLease.take(engines.nodes, log, { fixed: config.NODE_ID });
    cleanups.push(() => lease.stop());
    const nodeId = lease.id;
    const now = opts.now ?? Date.now;

    const auth = new Authenticator(sql, engines.pubsub, now);
    await auth.start();
    const limiter = new Limiter(
      engines.limits,
      engines.pubsub,
      {
        scale: config.FLOCK_LIMITS_SCALE,
        ban: {
          strikes: config.FLOCK_BAN_STRIKES,
          windowMs: config.FLOCK_BAN_WINDOW * 1000,
          banMs: config.FLOCK_BAN_SECONDS * 1000,
        },
      },
      now,
    );
    await limiter.start();
    const circuits = new Circuits(
      { postgres: () => sql`select 1`, ...(engines.kind === "redis" ? { redis: () => engines.ping() } : {}) },
      log,
    );
    cleanups.push(async () => circuits.stop());
    const cacheRepair = new CacheRepair({ sql, engines }, log);
    cacheRepair.start();
    cleanups.push(() => cacheRepair.stop());
    const svc: Services = { config, log, sql, engines, ids: new IdGenerator(nodeId), auth, limiter, now, circuits, cacheRepair };
    lease.start(svc.ids);
    // sends record what they have in flight; every node finishes the appends of nodes that died (after the lease)
    messaging(svc).trackInFlight(lease.owner);
    const reconciler = new Reconciler(svc, lease.owner);
    reconciler.start();
    cleanups.push(() => reconciler.stop());
    cleanups.push(startClaimSweeper(svc));

    const metrics = new Metrics();
    const router = new Router();
    for (const r of allRoutes(metrics)) router.add(r);
    const app = uws.App();
    const state: HttpState = { draining: false, closed: false, inflight: 0, idle: [] };
    // WebSocket route first: mountHttp registers the catch-all
    const ws = await mountWs(app, svc);
    cleanups.push(() => ws.shutdown());
    mountHttp(app, router, svc, metrics, state);

    // exclusively: a port another process (another Flock node too) holds fails here instead of being shared
    const listenSocket = await listenExclusive(app, config.HOST, config.PORT);
    if (!listenSocket) throw new StartupError(listenFailure(config.HOST, config.PORT));
    const port = uws.us_socket_local_port(listenSocket as never);
    log.info(
      { port, host: config.HOST, nodeId, engines: engines.kind, postgres: embedded ? "embedded" : "server" },
      "flock listening",
    );

    let closing: Promise<void> | undefined;
    const close = () => {
      closing ??= (async () => {
        state.draining = true;
        uws.us_listen_socket_close(listenSocket as never);
        await ws.shutdown(); // closes sockets (1001) and answers waiting long polls at once
        if (state.inflight > 0) {
          await new Promise<void>((resolve) => {
            const t = setTimeout(resolve, config.FLOCK_SHUTDOWN_GRACE * 1000);
            state.idle.push(() => {
              clearTimeout(t);
              resolve();
            });
          });
        }
        // from here on the backends go: what still arrives on a kept-alive connection answers 503 (and closes)
        state.closed = true;
        await undo();
        log.info("flock stopped");
      })();
      return closing;
    };
    return { port, svc, lease, close };
  } catch (err) {
    await undo();
    throw err;
  }
}
