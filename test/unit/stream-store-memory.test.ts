// The messaging core's stores' contract (test/stream-store.contract.ts) on the in-memory twin (test/twins/); on
// Postgres: test/stream-store-postgres.test.ts.
import t from "tap";
import { memoryStores } from "../twins/index.ts";
import { streamStoreContract } from "../stream-store.contract.ts";

streamStoreContract(t, async () => {
  const { stores, tables } = memoryStores();
  return {
    stores,
    principal: async (id, opts) => tables.principal(id, opts),
    befriend: async (a, b) => tables.befriend(a, b),
    group: async (id, members) => tables.group(id, members),
    expire: async (horizon) => tables.expire(horizon),
    close: async () => {},
  };
});

t.test("the twin down fails every call as Postgres out of reach does, until it is up", async (t) => {
  const { stores, tables } = memoryStores();
  tables.principal("1");
  tables.down();
  await t.rejects(stores.streams.streamsOf(["1"]), { code: "ECONNREFUSED" });
  await t.rejects(stores.sends.committed([1n]), { code: "ECONNREFUSED" });
  tables.up();
  t.same((await stores.streams.streamsOf(["1"])).get("1"), ["1"]);
});
