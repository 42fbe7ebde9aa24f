// The node registry contract (test/node-registry.contract.ts) on the memory engine; on Redis: test/node-lease.test.ts.
import t from "tap";
import { MemoryNodes } from "../../runtime/engines/memory/nodes.ts";
import { registryContract } from "../node-registry.contract.ts";

registryContract(t, async () => ({ nodes: new MemoryNodes(), close: async () => {} }));
