// The one-time tickets contract (test/tickets-engine.contract.ts) on Redis; on the memory engine:
// test/unit/tickets-engine-memory.test.ts.
import t from "tap";
import { createRedisEngines } from "../runtime/engines/redis/index.ts";
import { TEST_REDIS_URL, uniqueName } from "./helpers/env.ts";
import { deletePrefix } from "./helpers/node.ts";
import { ticketsContract } from "./tickets-engine.contract.ts";

t.test("redis engine", async (t) => {
  ticketsContract(t, async () => {
    const prefix = `flocktest:${uniqueName("tk")}:`;
    const e = await createRedisEngines(TEST_REDIS_URL, prefix);
    return {
      engine: e.tickets,
      close: async () => {
        await e.close();
        await deletePrefix(prefix);
      },
    };
  });
});
