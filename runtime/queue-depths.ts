// Where the queue gauges (runtime/metrics.ts, QueueReaders) read the queues a message waits in on a node, when
// /metrics is scraped: sends and acks held by the hub's batchers, long polls waiting, members held back after failed
// acks, the Postgres pool's queues, the Redis command connection's replies awaited, and this node's in-flight record.
// Each read is a length or a count kept anyway, so the paths that fill and empty the queues pay nothing; the in-flight
// record is one ZCARD. The WebSocket send buffers are read by runtime/ws/server.ts, which holds the open sockets.
import { poolLevels } from "./db/postgres-driver.ts";
import type { Services } from "./services.ts";

/** How long a scrape waits for the in-flight record's size before it reports the last one read. */
const IN_FLIGHT_READ_MS = 500;

/**
 * `owner`: this node's lease owner, under which its sends are recorded in flight (runtime/messaging/reconcile.ts).
 * Returns what stops the reads (startNode calls it as the node stops).
 */
export function watchQueues(svc: Services, owner: string): () => void {
  const { hub, sql, engines, circuits, log } = svc;
  if (poolLevels(sql) === undefined)
    log.warn("the Postgres pool's queues were not found (another postgres.js?): flock_postgres_pool_* read 0");
  return svc.metrics.watchQueues({
    sends: (kind) => hub.queued()[kind],
    acks: () => hub.queued().acks,
    longPolls: () => hub.queued().polls,
    redeliveryBackoff: () => hub.queued().backoff,
    postgresPool: () => poolLevels(sql),
    redisPending: () => engines.pendingCommands(),
    async inFlight() {
      // Redis out of reach: the gauge keeps its last value (flock_circuit_open says why)
      if (circuits.redis?.isOpen) return undefined;
      let timer: NodeJS.Timeout | undefined;
      const late = new Promise<undefined>((resolve) => (timer = setTimeout(resolve, IN_FLIGHT_READ_MS, undefined)));
      try {
        return await Promise.race([engines.inflight.count(owner), late]);
      } catch (err) {
        log.warn({ err: err instanceof Error ? err.message : String(err) }, "in-flight record not read for /metrics");
        return undefined;
      } finally {
        clearTimeout(timer);
      }
    },
  });
}
