// The feed cache contract (test/feed-engine.contract.ts) on the memory engine; on Redis: test/feed-engine-redis.test.ts.
import t from "tap";
import { MemoryFeed } from "../../runtime/engines/memory/feed.ts";
import { createMemoryEngines } from "../../runtime/engines/memory/index.ts";
import { MemoryMoments } from "../../runtime/engines/memory/moments.ts";
import { feedContract } from "../feed-engine.contract.ts";

feedContract(t, async (depth) => {
  const moments = new MemoryMoments();
  return { feed: new MemoryFeed({ depth, moments }), moments, close: async () => {} };
});

t.test("the memory engine set exposes a feed cache", async (t) => {
  t.ok(createMemoryEngines().feed instanceof MemoryFeed);
});
