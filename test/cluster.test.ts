// Flock on a Redis Cluster of 3 masters and 3 replicas, started on private ports (test/helpers/redis-cluster.ts):
// the four engine contracts, two nodes and two server processes sharing it, slots moved to another master mid-traffic
// (every send still 201), and a master killed mid-traffic (every 201'd message is still delivered, and sends succeed
// again within the cluster's failover time).
import t from "tap";
import { createRedisEngines, redisClient } from "../runtime/engines/redis/index.ts";
import { RedisFeed } from "../runtime/engines/redis/feed.ts";
import { RedisStreamCursors } from "../runtime/engines/redis/stream-cursors.ts";
import { redisKeys } from "../runtime/engines/redis/keys.ts";
import { RedisMoments } from "../runtime/engines/redis/moments.ts";
import { defineScripts } from "../runtime/engines/redis/scripts.ts";
import { twoNodes, twoProcesses } from "./cross-node.scenarios.ts";
import { feedContract } from "./feed-engine.contract.ts";
import { streamCursorsContract } from "./stream-cursors-engine.contract.ts";
import { uniqueName } from "./helpers/env.ts";
import { clusterAvailable, type RedisCluster, startRedisCluster } from "./helpers/redis-cluster.ts";
import { limitsContract } from "./limits-engine.contract.ts";
import { presenceContract } from "./presence-engine.contract.ts";
import { failover } from "./cluster-failover.scenario.ts";
import { migration } from "./cluster-migration.scenario.ts";

if (!clusterAvailable() && !process.env["CI"]) {
  t.plan(0, "no redis-server and redis-cli on this machine, and not in CI"); // the whole file: reported as skipped
} else {
  const cluster: RedisCluster = await startRedisCluster(t);
  t.comment(`cluster ${cluster.url}`);

  /** A fresh set of cluster engines, under their own key prefix. */
  const engines = (label: string) => createRedisEngines(cluster.url, `flocktest:${uniqueName(label)}:`);
  /** Connected cluster clients for an engine built by hand. */
  const clients = async (label: string) => {
    const cmd = redisClient(cluster.url, "flock-cmd");
    const sub = redisClient(cluster.url, "flock-sub");
    await Promise.all([cmd.connect(), sub.connect()]);
    return {
      cmd,
      sub,
      keys: redisKeys(`flocktest:${uniqueName(label)}:`),
      close: async () => void (await Promise.allSettled([cmd.quit(), sub.quit()])),
    };
  };

  t.test("engine contracts on the cluster", async (t) => {
    t.test("limits", async (t) => {
      limitsContract(t, async () => {
        const e = await engines("lim");
        return { engine: e.limits, close: () => e.close() };
      });
    });
    t.test("presence", async (t) => {
      presenceContract(t, async () => {
        const e = await engines("pres");
        return { engine: e.presence, close: () => e.close() };
      });
    });
    // the remembered cursors (every member's inbox and groups) and the feed, built from the cluster clients of a set
    // of engines (the feed with the contract's small bounds)
    t.test("stream cursors", async (t) => {
      streamCursorsContract(t, async () => {
        const c = await clients("gc");
        return { engine: new RedisStreamCursors(defineScripts(c.cmd), c.keys, { clustered: true }), close: c.close };
      });
    });
    t.test("feed", async (t) => {
      feedContract(t, async (depth) => {
        const c = await clients("feed");
        const redis = defineScripts(c.cmd);
        return {
          feed: new RedisFeed(redis, c.keys, { depth, clustered: true }),
          moments: new RedisMoments(redis, c.keys),
          close: c.close,
        };
      });
    });
  });

  t.test("two nodes on the cluster", async (t) => {
    twoNodes(t, cluster.url);
  });

  t.test("two server processes on the cluster", (t) => twoProcesses(t, cluster.url));

  t.test("slots moved to another master mid-traffic (ASK, then MOVED)", (t) => migration(t, cluster));

  t.test("a master killed mid-traffic", (t) => failover(t, cluster));
}
