// Production engines on Redis: one command connection and one subscriber connection per node; on a Redis Cluster
// (REDIS_URL redis+cluster://...), a cluster client for commands and one for subscriptions (ioredis opens a
// connection to each master it needs, and one per master for the sharded channels).
import { Cluster, Redis } from "ioredis";
import { redactUrl } from "../../redact.ts";
import { COMMAND_TIMEOUT_MS, type Engines } from "../engines.ts";
import { redisKeys } from "./keys.ts";
import { RedisLimits } from "./limits.ts";
import { RedisPresence } from "./presence.ts";
import { RedisStreamCursors } from "./stream-cursors.ts";
import { RedisPubSub } from "./pubsub.ts";
import { RedisStreamLog } from "./stream-log.ts";
import { RedisFeed } from "./feed.ts";
import { RedisMoments } from "./moments.ts";
import { RedisNodes } from "./nodes.ts";
import { RedisTickets } from "./tickets.ts";
import { RedisWebhookJobs } from "./webhook-jobs.ts";
import { defineScripts } from "./scripts.ts";
import { coalesceWrites } from "./coalesce.ts";
import { watchConnection } from "./connection-log.ts";
import type { Logger } from "../../log.ts";
import { type CacheLifetimes, DEFAULT_CACHE_LIFETIMES } from "../../retention/cache-lifetimes.ts";
import { type ClusterTarget, redisTarget } from "./target.ts";

class RedisUnavailableError extends Error {}

function connect(url: string, name: string): Redis {
  return new Redis(url, {
    connectionName: name,
    lazyConnect: true,
    // Off: coalesceWrites (below) saves the socket writes without the client's pipelining machinery.
    enableAutoPipelining: false,
    // An outage answers fast (runtime/circuit.ts): a command fails at once while disconnected (no offline queue,
    // no resend of what was in flight when the socket dropped) or after 1 s unanswered; reconnects are tried every
    // 50-250 ms, so service is back within about 250 ms of Redis.
    connectTimeout: 1000,
    commandTimeout: COMMAND_TIMEOUT_MS,
    maxRetriesPerRequest: 0,
    enableOfflineQueue: false,
    retryStrategy: (times) => Math.min(times * 50, 250),
  });
}

/**
 * A cluster client with the same outage rules as one connection (fast failure, no offline queue). A shard failing
 * over answers errors until a replica is promoted (runtime/circuit.ts counts them as an outage: 503s); MOVED and ASK
 * redirections are followed and the slot map refreshed by the client. Each shard's connection coalesces its writes
 * as one Redis's does (auto-pipelining is off: ioredis routes a script with a variable number of keys by its first
 * argument, the key count, and then refuses the batch as cross-slot).
 */
function connectCluster(t: ClusterTarget, name: string): Cluster {
  return new Cluster(t.nodes, {
    lazyConnect: true,
    enableOfflineQueue: false,
    enableAutoPipelining: false,
    shardedSubscribers: name === "flock-sub",
    scaleReads: "master",
    // a command to a shard failing over is retried this often (each up to the 1 s timeout) before it fails as an
    // outage: enough to follow a MOVED after a promotion, few enough to answer 503 within seconds
    maxRedirections: 4,
    retryDelayOnMoved: 0,
    retryDelayOnFailover: 100,
    retryDelayOnClusterDown: 100,
    retryDelayOnTryAgain: 100,
    slotsRefreshTimeout: 1000,
    // no periodic refresh of the slot map: a MOVED, an ASK or a shard's connection failing refreshes it (a failover
    // test passes the same), while each periodic refresh stalled the node (the sharded subscriber group compares two
    // JSON dumps of the 16,384-slot table): deliver p50 20 -> 110 ms on a local cluster
    slotsRefreshInterval: 0,
    clusterRetryStrategy: (times) => Math.min(times * 50, 250),
    redisOptions: {
      connectionName: name,
      username: t.username,
      password: t.password,
      tls: t.tls ? {} : undefined,
      connectTimeout: 1000,
      commandTimeout: COMMAND_TIMEOUT_MS,
      maxRetriesPerRequest: 0,
    },
  });
}

/**
 * A client for a REDIS_URL (not connected yet: lazyConnect), one Redis or a cluster, with the node's options.
 * `flock-sub` names the subscriber, which on a cluster also takes sharded subscriptions.
 */
export function redisClient(url: string, name: "flock-cmd" | "flock-sub"): Redis | Cluster {
  const target = redisTarget(url);
  return target.kind === "cluster" ? connectCluster(target, name) : connect(url, name);
}

export async function createRedisEngines(
  url: string,
  prefix: string,
  log?: Logger,
  lifetimes: CacheLifetimes = DEFAULT_CACHE_LIFETIMES,
): Promise<Engines> {
  const clustered = redisTarget(url).kind === "cluster";
  const cmd = redisClient(url, "flock-cmd");
  const sub = redisClient(url, "flock-sub");
  const watched = [watchConnection(cmd, "flock-cmd", log), watchConnection(sub, "flock-sub", log)];
  if (cmd instanceof Redis) coalesceWrites(cmd);
  else cmd.on("+node", (node: Redis) => coalesceWrites(node));
  try {
    await Promise.all([cmd.connect(), sub.connect()]);
    await cmd.ping();
  } catch (err) {
    cmd.disconnect();
    sub.disconnect();
    throw new RedisUnavailableError(
      `cannot reach Redis${clustered ? " Cluster" : ""} at ${redactUrl(url)}: ${(err as Error).message}`,
    );
  }
  const redis = defineScripts(cmd);
  const keys = redisKeys(prefix);
  const pubsub = new RedisPubSub(cmd, sub, keys);
  return {
    kind: "redis",
    limits: new RedisLimits(redis, keys),
    pubsub,
    presence: new RedisPresence(redis, keys),
    streams: new RedisStreamLog(redis, keys, lifetimes.streamLogIdleMs),
    streamCursors: new RedisStreamCursors(redis, keys, { clustered }),
    feed: new RedisFeed(redis, keys, { clustered }),
    moments: new RedisMoments(redis, keys, { ttlMs: lifetimes.momentRecordMs }),
    nodes: new RedisNodes(redis, keys),
    tickets: new RedisTickets(redis, keys),
    webhookJobs: new RedisWebhookJobs(redis, keys),
    async ping() {
      await cmd.ping();
    },
    // ioredis's queue of commands awaiting their replies (a deque: O(1)); on a cluster, each master's connection's
    pendingCommands: () =>
      cmd instanceof Redis
        ? cmd.commandQueue.length
        : cmd.nodes("master").reduce((n, node) => n + node.commandQueue.length, 0),
    async close() {
      for (const w of watched) w.quiet();
      await Promise.allSettled([cmd.quit(), sub.quit()]);
    },
  };
}
