// The in-memory twins of the messaging core's stores, on one set of tables: what the unit tier builds the hub, the
// streams and the sessions on (no Postgres), held to Postgres's behaviour by test/stream-store.contract.ts.
import type { CoreStores } from "../../runtime/messaging/core-stores.ts";
import { MemorySendStore } from "./send-store.ts";
import { MemoryStreamStore } from "./stream-store.ts";
import { StreamTables } from "./stream-tables.ts";

export { MemorySendStore, MemoryStreamStore, StreamTables };

/** Twins of the core's stores, and the tables under them (to set up principals and groups, or take them down). */
export function memoryStores(): { stores: CoreStores; tables: StreamTables } {
  const tables = new StreamTables();
  return { stores: { streams: new MemoryStreamStore(tables), sends: new MemorySendStore(tables) }, tables };
}
