// The one-time tickets contract (test/tickets-engine.contract.ts) on the memory engine; on Redis:
// test/tickets-engine-redis.test.ts.
import t from "tap";
import { createMemoryEngines } from "../../runtime/engines/memory/index.ts";
import { ticketsContract } from "../tickets-engine.contract.ts";

ticketsContract(t, async () => {
  const e = createMemoryEngines();
  return { engine: e.tickets, close: () => e.close() };
});
