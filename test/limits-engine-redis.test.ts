// The limits engine contract (test/limits-engine.contract.ts) on Redis; on the memory engine: test/unit/limits-engine-memory.test.ts.
import t from "tap";
import { createRedisEngines } from "../runtime/engines/redis/index.ts";
import { TEST_REDIS_URL, uniqueName } from "./helpers/env.ts";
import { deletePrefix } from "./helpers/node.ts";
import { limitsContract } from "./limits-engine.contract.ts";

t.test("redis engine", async (t) => {
  limitsContract(t, async () => {
    const prefix = `flocktest:${uniqueName("lim")}:`;
    const e = await createRedisEngines(TEST_REDIS_URL, prefix);
    return {
      engine: e.limits,
      close: async () => {
        await e.close();
        await deletePrefix(prefix);
      },
    };
  });
});
