// The limits engine contract (test/limits-engine.contract.ts) on the memory engine; on Redis: test/limits-engine-redis.test.ts.
import t from "tap";
import { createMemoryEngines } from "../../runtime/engines/memory/index.ts";
import { limitsContract } from "../limits-engine.contract.ts";

limitsContract(t, async () => {
  const e = createMemoryEngines();
  return { engine: e.limits, close: () => e.close() };
});
