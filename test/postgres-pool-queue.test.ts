// The node's Postgres pool under a steady load below its size (issue 34's CPU creep): through connectSql, postgres.js
// runs on runtime/db/pool-queue.ts, whose slots stay bounded however many queries pass, where postgres.js's own queue
// grew a slot per query (test/unit/pool-queue.test.ts shows that growth on the package's own file).
import t from "tap";
import { connectSql } from "../runtime/db/client.ts";
import { poolQueueHighWater } from "../runtime/db/pool-queue.ts";
import { TEST_DATABASE_URL } from "./helpers/env.ts";

t.test(
  "20,000 queries three at a time on a pool of ten: the pool's queues never hold more than a bounded few slots",
  async (t) => {
    const sql = await connectSql({ url: TEST_DATABASE_URL, schema: "public", pool: 10 });
    t.teardown(() => sql.end({ timeout: 1 }));
    // every connection opened once, so that seven sit idle while three work
    await Promise.all(Array.from({ length: 10 }, () => sql`select pg_sleep(0.02)`));
    let n = 0;
    await Promise.all(
      [0, 1, 2].map(async () => {
        while (n < 20_000) {
          n++;
          await sql`select 1`;
        }
      }),
    );
    t.equal(n, 20_000);
    t.ok(poolQueueHighWater() >= 10, "the pool ran on this queue (its ten connections were in one)");
    t.ok(
      poolQueueHighWater() <= 10 + 64,
      `the largest queue held ${poolQueueHighWater()} slots (postgres.js's own: one more per query)`,
    );
  },
);
