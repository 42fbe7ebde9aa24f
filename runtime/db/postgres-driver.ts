// postgres.js, loaded with runtime/db/pool-queue.ts as its pool's queue (why: that file's head). The CommonJS build
// resolves its modules through require's cache, so the queue goes into the cache under the path of the package's own
// queue.js before the package is first required; the check after it fails the start if the package was already loaded
// (the queue would be the original). Every runtime part gets postgres.js from here, never from "postgres" itself.
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import type postgresType from "postgres";
import type { PoolLevels } from "../metrics.ts";
import { capturingQueues, type PoolQueue, poolQueue } from "./pool-queue.ts";

const require = createRequire(import.meta.url);
const entry = require.resolve("postgres");
const queuePath = join(dirname(entry), "queue.js");

if (!require.cache[queuePath]) {
  require.cache[queuePath] = {
    id: queuePath,
    filename: queuePath,
    loaded: true,
    exports: poolQueue,
    children: [],
    paths: [],
  } as unknown as NodeJS.Module;
}
const original = require("postgres") as typeof postgresType;
if (require.cache[queuePath]?.exports !== poolQueue) {
  throw new Error(
    `postgres.js was loaded before runtime/db/postgres-driver.ts; its pool queue (${queuePath}) is the original`,
  );
}

/** A pool's own queues, in the order postgres.js's Postgres() makes them (its src/index.js). */
const POOL_QUEUES = ["queries", "connecting", "reserved", "closed", "ended", "open", "busy", "full"] as const;
type Pool = Record<(typeof POOL_QUEUES)[number], PoolQueue<unknown>> & { sent: PoolQueue<unknown>[] };
const pools = new WeakMap<object, Pool>();

/**
 * A pool's queues, found among those its postgres() call made: first the subscription client's (a pool of its own),
 * then the pool's eight, then one per connection (`sent`: the queries written to it behind the one it runs). So the
 * pool's are the last 8 + max, and at this point all are empty but `closed`, which holds every connection. Anything
 * else (another postgres.js) is not kept: the pool's levels then read as unknown.
 */
function poolOf(made: PoolQueue<unknown>[], max: number): Pool | undefined {
  const own = made.slice(-(POOL_QUEUES.length + max));
  if (own.length !== POOL_QUEUES.length + max) return undefined;
  const pool = { sent: own.slice(POOL_QUEUES.length) } as Pool;
  POOL_QUEUES.forEach((name, i) => (pool[name] = own[i]!));
  const fresh = own.every((q) => q.length === (q === pool.closed ? max : 0));
  return fresh ? pool : undefined;
}

/** postgres.js, each pool's queues kept for poolLevels. */
const postgres = Object.assign((...args: Parameters<typeof original>) => {
  const { out: sql, queues } = capturingQueues(() => original(...args));
  const pool = poolOf(queues, sql.options.max);
  if (pool) pools.set(sql, pool);
  return sql;
}, original) as unknown as typeof postgresType;

/**
 * What waits in a pool now (the queue gauges read it when scraped; a few lengths, one per connection): queries
 * waiting for a connection, queries pipelined behind a running one, and the connections by state. Undefined for a
 * pool whose queues were not found.
 */
export function poolLevels(sql: object): PoolLevels | undefined {
  const p = pools.get(sql);
  if (!p) return undefined;
  let pipelined = 0;
  for (const s of p.sent) pipelined += s.length;
  return {
    waiting: p.queries.length,
    pipelined,
    connections: {
      idle: p.open.length,
      busy: p.busy.length + p.full.length,
      reserved: p.reserved.length,
      connecting: p.connecting.length,
      closed: p.closed.length + p.ended.length,
    },
  };
}

export default postgres;
