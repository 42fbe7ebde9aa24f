// The stream cursors contract (test/stream-cursors-engine.contract.ts) on Redis; on the memory engine:
// test/unit/stream-cursors-engine-memory.test.ts.
import { Redis } from "ioredis";
import t from "tap";
import { RedisStreamCursors } from "../runtime/engines/redis/stream-cursors.ts";
import { redisKeys } from "../runtime/engines/redis/keys.ts";
import { defineScripts } from "../runtime/engines/redis/scripts.ts";
import { streamCursorsContract } from "./stream-cursors-engine.contract.ts";
import { TEST_REDIS_URL, uniqueName } from "./helpers/env.ts";
import { deletePrefix } from "./helpers/node.ts";

t.test("redis engine", async (t) => {
  streamCursorsContract(t, async () => {
    const prefix = `flocktest:${uniqueName("gc")}:`;
    const cmd = new Redis(TEST_REDIS_URL);
    return {
      engine: new RedisStreamCursors(defineScripts(cmd), redisKeys(prefix), { clustered: false }),
      close: async () => {
        cmd.disconnect();
        await deletePrefix(prefix);
      },
    };
  });
});
