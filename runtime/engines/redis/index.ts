// Production engines on Redis: one command connection and one subscriber connection per node.
import { Redis } from "ioredis";
import { redactUrl } from "../../redact.ts";
import type { Engines } from "../engines.ts";
import { redisKeys } from "./keys.ts";
import { RedisLimits } from "./limits.ts";
import { RedisMailboxes } from "./mailbox.ts";
import { RedisPresence } from "./presence.ts";
import { RedisPubSub } from "./pubsub.ts";
import { RedisFeed } from "./feed.ts";
import { RedisMoments } from "./moments.ts";
import { RedisInFlight, RedisNodes } from "./nodes.ts";
import { defineScripts } from "./scripts.ts";
import { coalesceWrites } from "./coalesce.ts";
import { watchConnection } from "./connection-log.ts";
import type { Logger } from "../../log.ts";

export class RedisUnavailableError extends Error {}

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
    commandTimeout: 1000,
    maxRetriesPerRequest: 0,
    enableOfflineQueue: false,
    retryStrategy: (times) => Math.min(times * 50, 250),
  });
}

export async function createRedisEngines(url: string, prefix: string, log?: Logger): Promise<Engines> {
  const cmd = connect(url, "flock-cmd");
  const sub = connect(url, "flock-sub");
  const watched = [watchConnection(cmd, "flock-cmd", log), watchConnection(sub, "flock-sub", log)];
  coalesceWrites(cmd);
  try {
    await Promise.all([cmd.connect(), sub.connect()]);
    await cmd.ping();
  } catch (err) {
    cmd.disconnect();
    sub.disconnect();
    throw new RedisUnavailableError(`cannot reach Redis at ${redactUrl(url)}: ${(err as Error).message}`);
  }
  const redis = defineScripts(cmd);
  const keys = redisKeys(prefix);
  const pubsub = new RedisPubSub(cmd, sub, keys);
  return {
    kind: "redis",
    limits: new RedisLimits(redis, keys),
    pubsub,
    mailboxes: new RedisMailboxes(redis, keys, pubsub),
    presence: new RedisPresence(redis, keys),
    feed: new RedisFeed(redis, keys),
    moments: new RedisMoments(redis, keys),
    nodes: new RedisNodes(redis, keys),
    inflight: new RedisInFlight(redis, keys),
    async ping() {
      await cmd.ping();
    },
    async close() {
      for (const w of watched) w.quiet();
      await Promise.allSettled([cmd.quit(), sub.quit()]);
    },
  };
}
