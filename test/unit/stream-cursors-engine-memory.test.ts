// The stream cursors contract (test/stream-cursors-engine.contract.ts) on the memory engine; on Redis:
// test/stream-cursors-engine-redis.test.ts.
import t from "tap";
import { MemoryStreamCursors } from "../../runtime/engines/memory/stream-cursors.ts";
import { streamCursorsContract } from "../stream-cursors-engine.contract.ts";

streamCursorsContract(t, async () => ({ engine: new MemoryStreamCursors(), close: async () => {} }));
