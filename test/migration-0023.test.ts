// Migration 0023's search index, built beforehand as docs/OPERATIONS.md ("Indexes built by an upgrade") says: one
// partition at a time with CREATE INDEX CONCURRENTLY while the older release runs, after which the migration attaches
// those indexes to its partitioned index rather than building a second one on each partition.
import t from "tap";
import { migrate, readMigrations } from "../runtime/db/migrate.ts";
import { emptySchema } from "./helpers/node.ts";

t.test("partition indexes built beforehand are attached, not built again", async (t) => {
  const { sql, schema } = await emptySchema(t);
  const all = readMigrations();
  await migrate(
    sql,
    schema,
    all.filter((m) => m.name < "0023"),
  );
  const parts = (
    await sql`select c.relname from pg_inherits i join pg_class c on c.oid = i.inhrelid join pg_class p on p.oid = i.inhparent
              join pg_namespace n on n.oid = p.relnamespace where p.relname = 'messages' and n.nspname = ${schema}`
  ).map((r) => r["relname"] as string);
  t.ok(parts.length >= 2, `partitions: ${parts.join(", ")}`);
  for (const part of parts) {
    await sql.unsafe(
      `create index concurrently if not exists "${part}_words_idx" on "${schema}"."${part}" using gin (to_tsvector('simple', body)) with (gin_pending_list_limit = 256)`,
    );
  }
  t.same(
    await migrate(sql, schema, all),
    all.filter((m) => m.name >= "0023").map((m) => m.name),
  );
  const words = await sql`
    select c.relname as part, count(*)::int as n, bool_and(x.indexrelid = any(select inhrelid from pg_inherits)) as attached
    from pg_index x join pg_class i on i.oid = x.indexrelid join pg_class c on c.oid = x.indrelid join pg_namespace n on n.oid = c.relnamespace
    where n.nspname = ${schema} and c.relname = any(${parts}) and pg_get_indexdef(x.indexrelid) like '%to_tsvector%'
    group by c.relname order by 1`;
  t.same(
    words,
    [...parts].sort().map((part) => ({ part, n: 1, attached: true })),
    "each partition has its one words index, attached to messages_words_idx",
  );
});
