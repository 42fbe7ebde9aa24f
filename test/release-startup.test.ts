// The rolling upgrade's startup check, as an operator meets it (runtime/release-check.ts): `npm start`'s process,
// beside a live node of a release it cannot run with, exits with an error naming that release, before it migrates
// anything; beside a node of 0.1.0 (a live lease that announced nothing) it starts and says it runs mixed; on a Redis
// keyspace of a newer layout it refuses. Real Redis (a private key prefix) and Postgres (a fresh schema).
import { Redis } from "ioredis";
import postgres from "postgres";
import t from "tap";
import { redisKeys } from "../runtime/engines/redis/keys.ts";
import { TEST_DATABASE_URL, TEST_REDIS_URL, uniqueName } from "./helpers/env.ts";
import { runToExit, startProcess } from "./helpers/process.ts";

const prefix = `${uniqueName("release")}:`;
const schema = uniqueName("release");
const schema2 = uniqueName("release");
const keys = redisKeys(prefix);
const redis = new Redis(TEST_REDIS_URL);
const sql = postgres(TEST_DATABASE_URL, { max: 1, onnotice: () => {} });
const env = { DATABASE_URL: TEST_DATABASE_URL, REDIS_URL: TEST_REDIS_URL, REDIS_PREFIX: prefix, PG_SCHEMA: schema };

t.teardown(async () => {
  const left = await redis.keys(`${prefix}*`);
  if (left.length) await redis.del(...left);
  redis.disconnect();
  await sql.unsafe(`drop schema if exists "${schema}" cascade`);
  await sql.unsafe(`drop schema if exists "${schema2}" cascade`);
  await sql.end();
});

/** A live node (its lease runs a minute from now) that announced `release`, or nothing (a node of 0.1.0). */
async function liveNode(owner: string, release?: object): Promise<void> {
  await redis.zadd(keys.nodeLeases(), Date.now() + 60_000, owner);
  if (release) await redis.hset(keys.nodeReleases(), owner, JSON.stringify(release));
}

async function tables(s = schema): Promise<number> {
  const [row] = await sql<
    { n: number }[]
  >`select count(*)::int as n from information_schema.tables where table_schema = ${s}`;
  return row!.n;
}

t.test(
  "beside a live node of a release it cannot mix with, the node exits with the reason, before migrating",
  async (t) => {
    await liveNode("ghost-9", { release: "9.0.0", protocol: 9, mixesWith: 9, layout: 1 });
    const r = await runToExit(env);
    t.not(r.code, 0, "it exits with an error");
    t.match(
      r.output,
      /cannot run beside what is running: a live node runs 9\.0\.0, which runs only beside protocol 9 or later/,
    );
    t.match(r.output, /CHANGELOG\.md/, "and says where to read which releases cannot run mixed");
    t.equal(await tables(), 0, "no migration ran");
    t.equal(await redis.hexists(keys.nodeReleases(), "ghost-9"), 1);
    t.equal(
      (await redis.hkeys(keys.nodeReleases())).length,
      1,
      "the refused node took its announcement back with its lease",
    );
    await redis.zrem(keys.nodeLeases(), "ghost-9");
  },
);

t.test("beside a node of 0.1.0 (a lease, no announcement) it starts, says so, and announces itself", async (t) => {
  await liveNode("ghost-010");
  const node = await startProcess(env);
  t.teardown(() => node.stop());
  t.match(node.output(), /"beside":\["0\.1\.0"\].*running beside other releases/);
  t.ok((await tables()) > 0, "it migrated");
  const announced = Object.values(await redis.hgetall(keys.nodeReleases())).map(
    (j) => JSON.parse(j) as { release: string; protocol: number },
  );
  t.match(announced, [{ protocol: 2 }]);
  await node.stop();
  t.same(await redis.hgetall(keys.nodeReleases()), {}, "a node that stops takes its announcement back");
  await redis.zrem(keys.nodeLeases(), "ghost-010");
});

t.test("on a keyspace of a newer layout it refuses, before migrating, and leaves the layout as it was", async (t) => {
  await redis.set(keys.layout(), "2");
  const r = await runToExit({ ...env, PG_SCHEMA: schema2 });
  t.not(r.code, 0);
  t.match(r.output, /Redis holds keyspace layout 2, written by a newer release/);
  t.equal(await tables(schema2), 0, "no migration ran");
  t.equal(await redis.get(keys.layout()), "2");
  t.same(await redis.hgetall(keys.nodeReleases()), {}, "nor is it announced");
  await redis.set(keys.layout(), "1");
});
