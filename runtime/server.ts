// Builds one Flock node from a config, and takes it down again gracefully. Every part of the node is started here,
// through runtime/node.ts, in one order (docs/ARCHITECTURE.md, the parts), and stopped in the reverse order:
// the backends, the id lease, auth and limits, the per-node parts, the messaging hub, the background passes,
// the metrics listener, then the routes (WebSocket and HTTP) and the listening socket.
import { allRoutes } from "../handlers/index.ts";
import { onClientFrame } from "../handlers/ws.ts";
import type { Config } from "./config.ts";
import { type HttpState, keepAliveHint, mountHttp } from "./http/pipeline.ts";
import { Router } from "./http/router.ts";
import { Lifecycle, type Trace } from "./lifecycle.ts";
import type { Logger } from "./log.ts";
import { listenMetrics } from "./metrics-listener.ts";
import type { NodeLease } from "./node-lease.ts";
import { listenFailure, startServices } from "./node.ts";
import { publicUrl } from "./public-url.ts";
import { watchQueues } from "./queue-depths.ts";
import type { Services } from "./services.ts";
import { type LoadedUws, listenExclusive, loadUws } from "./uws.ts";
import { mountWs } from "./ws/server.ts";

class StartupError extends Error {}

export interface RunningNode {
  port: number;
  /** The metrics listener's port, when FLOCK_METRICS_PORT is set (runtime/metrics-listener.ts). */
  metricsPort: number | undefined;
  svc: Services;
  /** This node's id lease (runtime/node-lease.ts). */
  lease: NodeLease;
  close(how?: CloseOptions): Promise<void>;
}

export interface CloseOptions {
  /** Serve on for FLOCK_SHUTDOWN_LINGER seconds first, each answer closing its connection (a SIGTERM). */
  linger?: boolean;
}

interface NodeOptions {
  now?: () => number;
  /** Sees each part start and stop (test/lifecycle.test.ts). */
  trace?: Trace;
  /**
   * Each statement's bound in ms (STATEMENT_TIMEOUT_MS unless told): a test that holds a row lock while it reads what
   * waits behind it raises it, so a loaded machine's slowness is not read as a timeout (test/queue-depths.test.ts).
   */
  statementTimeoutMs?: number;
  /**
   * How long a long-polling principal stays online after its last poll began (POLL_PRESENCE_GRACE_MS unless told): a
   * test of it going offline sets it short (test/presence-polling.test.ts).
   */
  pollPresenceGraceMs?: number;
}

export async function startNode(config: Config, log: Logger, opts: NodeOptions = {}): Promise<RunningNode> {
  const t0 = performance.now();
  let loaded: LoadedUws;
  try {
    loaded = loadUws();
  } catch (e) {
    throw new StartupError((e as Error).message);
  }
  const { uws, binding, build } = loaded;
  log.info({ binding: binding.split(/[/\\]/).pop(), build }, "uWebSockets.js native binding loaded");
  const uwsMs = Math.round(performance.now() - t0);

  const life = new Lifecycle(log, opts.trace);
  try {
    const { svc, lease, embedded } = await startServices(config, log, life, opts.now ?? Date.now, {
      statementTimeoutMs: opts.statementTimeoutMs,
      pollPresenceGraceMs: opts.pollPresenceGraceMs,
    });

    // the routes: stopping them closes every WebSocket (1001), answers every waiting long poll, and lets requests in
    // flight finish (at most FLOCK_SHUTDOWN_GRACE); from then on a request still arriving on a kept-alive
    // connection answers 503 at once, without touching the backends that stop next
    const state: HttpState = {
      draining: false,
      closed: false,
      inflight: 0,
      idle: [],
      drained: 0,
      keepAlive: keepAliveHint(config.FLOCK_SHUTDOWN_LINGER),
    };
    let drainStarted = 0;
    const metrics = svc.metrics;
    // the queue gauges read the hub's batchers, its held cursor copies and the pool from now on
    await life.add(
      "queue-gauges",
      () => watchQueues(svc),
      (unwatch) => unwatch(),
    );
    // the metrics listener, when FLOCK_METRICS_PORT is set: up before the routes and down after them, so a scrape
    // during the drain still reads the node
    const metricsListener = await life.add(
      "metrics-listen",
      () =>
        config.FLOCK_METRICS_PORT === undefined
          ? undefined
          : listenMetrics(metrics, config.FLOCK_METRICS_HOST, config.FLOCK_METRICS_PORT, log),
      (m) => m?.close(),
    );
    const routes = await life.add(
      "routes",
      () => {
        const router = new Router();
        for (const r of allRoutes(metrics, () => state.draining)) router.add(r);
        const a = uws.App();
        // WebSocket route first: mountHttp registers the catch-all
        const ws = mountWs(a, svc, onClientFrame);
        mountHttp(a, router, svc, metrics, state);
        return { app: a, ws };
      },
      async ({ ws }) => {
        state.draining = true;
        ws.shutdown();
        svc.events.shutdown();
        svc.hub.release();
        if (state.inflight > 0) {
          await new Promise<void>((resolve) => {
            const t = setTimeout(resolve, config.FLOCK_SHUTDOWN_GRACE * 1000);
            state.idle.push(() => {
              clearTimeout(t);
              resolve();
            });
          });
        }
        state.closed = true;
        log.info(
          { drained: state.drained, inflight: state.inflight, ms: Math.round(performance.now() - drainStarted) },
          "requests drained",
        );
      },
    );

    // listening: stopping it stops accepting connections (one arriving after is refused); every
    // answer from then on closes its connection
    const listenSocket = await life.add(
      "listen",
      async () => {
        // exclusively: a port another process (another Flock node too) holds fails here instead of being shared
        const s = await listenExclusive(routes.app, config.HOST, config.PORT);
        if (!s) throw new StartupError(listenFailure(config.HOST, config.PORT));
        return s;
      },
      // closed from the check phase, just after the poll phase accepted what was waiting: a connection the kernel
      // had completed but uWS not yet accepted would be reset by the close (seen beside a CPU hog: one ack reset)
      (s) =>
        new Promise<void>((resolve) =>
          setImmediate(() => {
            uws.us_listen_socket_close(s as never);
            resolve();
          }),
        ),
    );

    // the linger, on a SIGTERM: before it stops listening the node serves on for FLOCK_SHUTDOWN_LINGER seconds,
    // every answer closing its connection. A request is never sent on a connection the node is about to close:
    // a load balancer has time to stop routing here, each client's next request takes a new connection, and one
    // left idle is dropped by its client (after the Keep-Alive hint) before the listening socket closes. Its last
    // second (at most half of it) refuses: every request answers 503 with a Retry-After of SHUTDOWN_RETRY_AFTER_S, so
    // clients that wait as told are not connecting when the socket closes (a connection still in the kernel's
    // accept queue then would be reset: seen beside a CPU hog, 1-3 polls and acks a chaos run).
    let lingerMs = 0;
    await life.add(
      "linger",
      () => undefined,
      async () => {
        drainStarted = performance.now();
        state.draining = true;
        if (lingerMs === 0) return;
        log.info({ seconds: lingerMs / 1000 }, "draining: serving on, each answer closing its connection");
        const refusingMs = Math.min(1000, lingerMs / 2);
        await new Promise((resolve) => setTimeout(resolve, lingerMs - refusingMs));
        state.closed = true;
        await new Promise((resolve) => setTimeout(resolve, refusingMs));
      },
    );
    const port = uws.us_socket_local_port(listenSocket as never);
    svc.self.set(config.HOST, port);
    const metricsPort = metricsListener?.port;
    log.info(
      {
        port,
        host: config.HOST,
        nodeId: lease.id,
        engines: svc.engines.kind,
        postgres: embedded ? "embedded" : "server",
        publicUrl: publicUrl(config, svc.self, ""),
        ...(metricsPort !== undefined ? { metrics: `${config.FLOCK_METRICS_HOST}:${metricsPort}` } : {}),
        // how long the start took (ms): in all, each part (in the start order), and the process's age (its modules'
        // loading included), so a slow start names its slow step
        startMs: Math.round(performance.now() - t0),
        parts: { uws: uwsMs, ...life.startMs },
        uptimeMs: Math.round(process.uptime() * 1000),
      },
      "flock listening",
    );

    let closing: Promise<void> | undefined;
    const close = (how: CloseOptions = {}) => {
      if (!closing && how.linger) lingerMs = config.FLOCK_SHUTDOWN_LINGER * 1000;
      closing ??= life.stop().then(() => log.info("flock stopped"));
      return closing;
    };
    return { port, metricsPort, svc, lease, close };
  } catch (err) {
    await life.stop();
    throw err;
  }
}
