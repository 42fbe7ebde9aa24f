// A migration beside a busy older release (runtime/db/migrate.ts): a statement that cannot get its table's lock
// within lock_timeout rolls the migration back whole, and it runs again once the lock is free, applied once; the
// traffic holding the lock is not held back behind it meanwhile.
import postgres from "postgres";
import t from "tap";
import { migrate } from "../runtime/db/migrate.ts";
import { TEST_DATABASE_URL } from "./helpers/env.ts";
import { holdLock } from "./helpers/hold-lock.ts";
import { emptySchema } from "./helpers/node.ts";
import { until } from "./helpers/wait.ts";

t.test("a migration that cannot get a lock steps back and runs again", async (t) => {
  const { sql, schema } = await emptySchema(t);
  await migrate(sql, schema, [{ name: "9000_table", sql: "create table t (x int); insert into t values (1)" }]);

  // an older node's long statement holds the table (a share lock: reads and writes of its own go on)
  const lock = await holdLock(t, `lock table "${schema}".t in row exclusive mode`);

  let retries = 0;
  const migration = migrate(
    sql,
    schema,
    [
      { name: "9000_table", sql: "create table t (x int)" },
      { name: "9001_column", sql: "alter table t add column y int not null default 2" },
    ],
    { lockTimeoutMs: 100, onRetry: () => retries++ },
  );
  // while it waits, a writer beside the holder is not queued behind it for long: each attempt gives up its wait
  const other = postgres(TEST_DATABASE_URL, { max: 1, onnotice: () => {} });
  t.teardown(() => other.end());
  let wrote = false;
  // (a writer queued behind a migration that never gave up its wait would wait for the holder: its 3 s bound
  // would cancel it each time, until this wait ran out)
  await until(
    async () => {
      try {
        await other.unsafe(`set statement_timeout = 3000; insert into "${schema}".t (x) values (2)`);
        wrote = true;
      } catch {
        // cancelled at its bound: try again
      }
      return wrote;
    },
    { ms: 15_000, what: "a write beside the waiting migration" },
  );
  t.ok(wrote, "another writer's insert goes through while the migration waits");
  // the write may come before the migration reaches the table (it first waits for the migrations' advisory lock, which
  // a test file beside this one may hold): the lock is held until it has stepped back once
  await until(() => retries > 0, { ms: 30_000, what: "the migration stepping back" });
  await lock.release();
  t.same(await migration, ["9001_column"], "applied once, after the lock was free");
  t.ok(retries > 0, `it stepped back ${retries} times`);
  t.same(await sql.unsafe(`select x, y from "${schema}".t order by x`), [
    { x: 1, y: 2 },
    { x: 2, y: 2 },
  ]);
});
