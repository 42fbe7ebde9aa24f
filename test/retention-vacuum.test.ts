// The maintainer's vacuum step on real Postgres: where no autovacuum runs (PGlite; a server with autovacuum off, as the
// shared one here may be), a pass vacuums the tables whose dead rows passed autovacuum's rule (threshold + scale
// factor x live rows, the server's settings), and no other; "auto" asks the server. Dead rows are made by deleting
// moments (and, by the cascade, their likes) as retention does; their counts are flushed to the statistics at once
// (pg_stat_force_next_flush), as a backend does by itself within seconds.
import t from "tap";
import { createLogger } from "../runtime/log.ts";
import { RetentionMaintainer } from "../runtime/retention/maintainer.ts";
import { autovacuumOn } from "../runtime/retention/vacuum-store.ts";
import { call, registerAgent } from "./helpers/http.ts";
import { startTestNode } from "./helpers/node.ts";
import { post } from "./helpers/social.ts";

t.test("a pass vacuums what passed autovacuum's rule, and only that", async (t) => {
  const node = await startTestNode(t, { engine: "memory", env: { FLOCK_LIMITS_SCALE: "1000" } });
  const sql = node.svc.sql;
  const author = await registerAgent(node.url, "author");
  const fan = await registerAgent(node.url, "fan");
  const ids: string[] = [];
  const likes = new Set<number>();
  for (let i = 0; i < 120; i++) {
    ids.push((await post(node.url, author, "public", `m${i}`)).id);
    if (i < 100) likes.add((await call(node.url, "POST", `/v1/moments/${ids[i]}/like`, { token: fan.token })).status);
  }
  t.same([...likes], [204], "120 moments posted, 100 liked");
  const stats = async (table: string) => {
    const [r] = await sql<{ live: number; dead: number; vacuums: number }[]>`
      select n_live_tup::int as live, n_dead_tup::int as dead, (vacuum_count + autovacuum_count)::int as vacuums
      from pg_stat_user_tables where schemaname = current_schema() and relname = ${table}`;
    return r!;
  };
  // 100 of 120 moments go, with their 100 likes, on one connection whose counts are flushed at once
  const remove = async (gone: string[]) => {
    const conn = await sql.reserve();
    try {
      await conn`delete from moments where id in ${conn(gone.map((id) => id.replace(/^moment_/, "")))}`;
      await conn`select pg_stat_force_next_flush()`;
      await conn`select 1`;
    } finally {
      conn.release();
    }
  };
  await remove(ids.slice(0, 100));
  const before = { moments: await stats("moments"), likes: await stats("moment_likes") };
  t.ok(before.moments.dead >= 100, `moments has its dead rows counted (${before.moments.dead})`);
  t.ok(before.likes.dead >= 100, `moment_likes too (${before.likes.dead})`);

  const off = new RetentionMaintainer(sql, node.svc.horizons, Date.now, createLogger("silent"), { vacuum: false });
  t.same((await off.pass())?.vacuumed, [], "vacuum off (autovacuum runs): the pass vacuums nothing");

  const on = new RetentionMaintainer(sql, node.svc.horizons, Date.now, createLogger("silent"), { vacuum: true });
  const r = await on.pass();
  const vacuumed = (r?.vacuumed ?? []).map((v) => v.split(" ")[0]);
  t.ok(vacuumed.includes("moments"), `moments vacuumed (${r?.vacuumed.join(", ")})`);
  t.ok(vacuumed.includes("moment_likes"), "moment_likes vacuumed");
  const after = { moments: await stats("moments"), likes: await stats("moment_likes") };
  t.equal(after.moments.dead, 0, "moments: no dead rows left");
  t.equal(after.likes.dead, 0, "moment_likes: no dead rows left");
  t.equal(after.moments.vacuums, before.moments.vacuums + 1, "one vacuum of moments");
  // 10 dead of 20 live moments is below the rule (50 + 0.2 x 20 with the defaults): left to a later pass
  await remove(ids.slice(100, 110));
  const dead = (await stats("moments")).dead;
  t.ok(dead >= 10, `10 more dead moments counted (${dead})`);
  t.same((await on.pass())?.vacuumed, [], "the next pass leaves a table below the rule alone");
});

t.test('"auto" vacuums exactly when the server runs no autovacuum', async (t) => {
  const node = await startTestNode(t, { engine: "memory" });
  const m = new RetentionMaintainer(node.svc.sql, node.svc.horizons, Date.now, createLogger("silent"));
  await m.start();
  t.teardown(() => m.stop());
  const serverRuns = await autovacuumOn(node.svc.sql);
  const [s] = await node.svc.sql<{ autovacuum: string }[]>`show autovacuum`;
  t.equal(serverRuns, s!.autovacuum === "on", `the server's autovacuum is ${s!.autovacuum}`);
  t.equal(m.describe()["vacuum"], serverRuns ? "autovacuum" : "by this pass (no autovacuum)");
});
