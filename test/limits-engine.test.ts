import t from "tap";
import { createMemoryEngines } from "../runtime/engines/memory/index.ts";
import { createRedisEngines } from "../runtime/engines/redis/index.ts";
import { TEST_REDIS_URL, uniqueName } from "./helpers/env.ts";
import { deletePrefix } from "./helpers/node.ts";
import { limitsContract } from "./limits-engine.contract.ts";

t.test("memory engine", async (t) => {
  limitsContract(t, async () => {
    const e = createMemoryEngines();
    return { engine: e.limits, close: () => e.close() };
  });
});

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
