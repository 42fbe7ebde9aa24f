// The feed cache contract (test/feed-engine.contract.ts) on Redis, and what only Redis does; on the memory engine:
// test/unit/feed-engine-memory.test.ts.
import t from "tap";
import { RedisMoments } from "../runtime/engines/redis/moments.ts";
import { createRedisEngines } from "../runtime/engines/redis/index.ts";
import { RedisFeed } from "../runtime/engines/redis/feed.ts";
import { redisKeys } from "../runtime/engines/redis/keys.ts";
import { defineScripts } from "../runtime/engines/redis/scripts.ts";
import { Redis } from "ioredis";
import { TEST_REDIS_URL, uniqueName } from "./helpers/env.ts";
import { deletePrefix } from "./helpers/node.ts";
import { feedContract } from "./feed-engine.contract.ts";

t.test("redis engine", async (t) => {
  feedContract(t, async (depth) => {
    const prefix = `flocktest:${uniqueName("feed")}:`;
    const redis = defineScripts(new Redis(TEST_REDIS_URL));
    return {
      feed: new RedisFeed(redis, redisKeys(prefix), { depth }),
      moments: new RedisMoments(redis, redisKeys(prefix)),
      close: async () => {
        redis.disconnect();
        await deletePrefix(prefix);
      },
    };
  });
});

t.test("the redis engine set exposes a feed cache", async (t) => {
  const prefix = `flocktest:${uniqueName("feedeng")}:`;
  const r = await createRedisEngines(TEST_REDIS_URL, prefix);
  t.teardown(async () => {
    await r.close();
    await deletePrefix(prefix);
  });
  t.ok(r.feed instanceof RedisFeed);
  const [miss] = await r.feed.read(["x"], null, 1);
  t.equal(miss?.hit, false);
});

t.test("redis: a record evicted from under its served JSON never serves older counts", async (t) => {
  const prefix = `flocktest:${uniqueName("moevict")}:`;
  const redis = defineScripts(new Redis(TEST_REDIS_URL));
  t.teardown(async () => {
    redis.disconnect();
    await deletePrefix(prefix);
  });
  const keys = redisKeys(prefix);
  const moments = new RedisMoments(redis, keys);
  await moments.store([{ id: 42n, head: '{"id":"moment_42"', likes: 1, comments: 0, rev: 1n }]);
  t.same(await moments.get([42n]), ['{"id":"moment_42","like_count":1,"comment_count":0}']);
  await redis.del(keys.moment(42n)); // an eviction takes the record hash and leaves its JSON
  await moments.counts([{ id: 42n, likes: 2, comments: 0, rev: 2n }]);
  t.same(await moments.get([42n]), [undefined], "not cached (read from Postgres), not the JSON with 1 like");
});
