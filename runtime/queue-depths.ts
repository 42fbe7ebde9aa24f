// Where the queue gauges (runtime/metrics.ts, QueueReaders) read the queues a message waits in on a node, when
// /metrics is scraped: sends and acks held by the hub's batchers, long polls waiting, members held back after failed
// acks, acks' cursor copies held after failing, the Postgres pool's queues and the Redis command connection's replies
// awaited. Each read is a length or a count kept anyway, so the paths that fill and empty the queues pay nothing. The
// WebSocket send buffers are read by runtime/ws/server.ts, which holds the open sockets.
import { poolLevels } from "./db/postgres-driver.ts";
import type { Services } from "./services.ts";

/** Returns what stops the reads (startNode calls it as the node stops). */
export function watchQueues(svc: Services): () => void {
  const { hub, sql, engines, log } = svc;
  if (poolLevels(sql) === undefined)
    log.warn("the Postgres pool's queues were not found (another postgres.js?): flock_postgres_pool_* read 0");
  return svc.metrics.watchQueues({
    sends: (kind) => hub.queued()[kind],
    acks: () => hub.queued().acks,
    longPolls: () => hub.queued().polls,
    redeliveryBackoff: () => hub.queued().backoff,
    cursorCopiesHeld: () => hub.streams.reads.copies.heldMembers,
    postgresPool: () => poolLevels(sql),
    redisPending: () => engines.pendingCommands(),
  });
}
