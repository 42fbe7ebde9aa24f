// The presence engine contract (test/presence-engine.contract.ts) on Redis; on the memory engine:
// test/unit/presence-engine-memory.test.ts.
import { Redis } from "ioredis";
import t from "tap";
import { redisKeys } from "../runtime/engines/redis/keys.ts";
import { RedisPresence } from "../runtime/engines/redis/presence.ts";
import { defineScripts } from "../runtime/engines/redis/scripts.ts";
import { TEST_REDIS_URL, uniqueName } from "./helpers/env.ts";
import { deletePrefix } from "./helpers/node.ts";
import { presenceContract } from "./presence-engine.contract.ts";

t.test("redis engine", async (t) => {
  presenceContract(t, async () => {
    const prefix = `flocktest:${uniqueName("pr")}:`;
    const cmd = new Redis(TEST_REDIS_URL);
    return {
      engine: new RedisPresence(defineScripts(cmd), redisKeys(prefix)),
      close: async () => {
        cmd.disconnect();
        await deletePrefix(prefix);
      },
    };
  });
});
