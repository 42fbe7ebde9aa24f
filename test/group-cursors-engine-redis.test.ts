// The group cursors contract (test/group-cursors-engine.contract.ts) on Redis; on the memory engine:
// test/unit/group-cursors-engine-memory.test.ts.
import { Redis } from "ioredis";
import t from "tap";
import { RedisGroupCursors } from "../runtime/engines/redis/group-cursors.ts";
import { redisKeys } from "../runtime/engines/redis/keys.ts";
import { defineScripts } from "../runtime/engines/redis/scripts.ts";
import { groupCursorsContract } from "./group-cursors-engine.contract.ts";
import { TEST_REDIS_URL, uniqueName } from "./helpers/env.ts";
import { deletePrefix } from "./helpers/node.ts";

t.test("redis engine", async (t) => {
  groupCursorsContract(t, async () => {
    const prefix = `flocktest:${uniqueName("gc")}:`;
    const cmd = new Redis(TEST_REDIS_URL);
    return {
      engine: new RedisGroupCursors(defineScripts(cmd), redisKeys(prefix), { clustered: false }),
      close: async () => {
        cmd.disconnect();
        await deletePrefix(prefix);
      },
    };
  });
});
