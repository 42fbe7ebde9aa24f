// The group cursors contract (test/group-cursors-engine.contract.ts) on the memory engine; on Redis:
// test/group-cursors-engine-redis.test.ts.
import t from "tap";
import { MemoryGroupCursors } from "../../runtime/engines/memory/group-cursors.ts";
import { groupCursorsContract } from "../group-cursors-engine.contract.ts";

groupCursorsContract(t, async () => ({ engine: new MemoryGroupCursors(), close: async () => {} }));
