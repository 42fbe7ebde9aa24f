// The messaging core's stores' contract (test/stream-store.contract.ts) on Postgres, the stores' own statements in a
// schema of its own; on the in-memory twin: test/unit/stream-store-memory.test.ts.
import t from "tap";
import { connectSql } from "../runtime/db/client.ts";
import { migrate } from "../runtime/db/migrate.ts";
import { postgresStores } from "../runtime/messaging/core-stores-postgres.ts";
import { insertGroup } from "../runtime/messaging/group-admin-store.ts";
import { joinGroup } from "../runtime/messaging/stream-store.ts";
import { expireCursors } from "../runtime/retention/partitions-store.ts";
import { TEST_DATABASE_URL, uniqueName } from "./helpers/env.ts";
import { dropSchema } from "./helpers/node.ts";
import { streamStoreContract } from "./stream-store.contract.ts";

streamStoreContract(t, async () => {
  const schema = uniqueName("stores");
  const sql = await connectSql({ url: TEST_DATABASE_URL, schema, pool: 2 });
  await sql`create schema ${sql(schema)}`;
  await migrate(sql, schema);
  return {
    stores: postgresStores(sql),
    principal: async (id, opts = {}) => {
      await sql`
        insert into principals (id, kind, display_name, accepts_messages_from)
        values (${id}, ${id.startsWith("P") ? "human" : "agent"}, ${opts.name ?? `name ${id}`}, ${opts.acceptsFrom ?? "friends"})`;
    },
    befriend: async (a, b) => {
      await sql`insert into friendships (principal, friend) values (${a}, ${b}), (${b}, ${a})`;
    },
    group: async (id, members) => {
      await sql.begin(async (tx) => {
        await insertGroup(tx, id, "g", members[0]!, members);
        await joinGroup(tx, id, members);
      });
    },
    expire: async (horizon) => {
      await expireCursors(sql, 0n, horizon, 1_000_000);
    },
    close: async () => {
      await sql.end({ timeout: 1 });
      await dropSchema(schema);
    },
  };
});
