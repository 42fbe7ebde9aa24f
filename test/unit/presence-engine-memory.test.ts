// The presence engine contract (test/presence-engine.contract.ts) on the memory engine; on Redis: test/presence-engine-redis.test.ts.
import t from "tap";
import { MemoryPresence } from "../../runtime/engines/memory/presence.ts";
import { presenceContract } from "../presence-engine.contract.ts";

presenceContract(t, async () => ({ engine: new MemoryPresence(), close: async () => {} }));
