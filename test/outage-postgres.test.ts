// Postgres stopped (-m immediate) under a running node: what needs Postgres answers 503 unavailable with
// Retry-After within 2 s and commits nothing; what needs only Redis (a cached token, a stream's recent messages in
// its Redis stream past a remembered cursor) keeps working; service and /readyz are back within a second of Postgres.
import t from "tap";
import postgres from "postgres";
import { Redis } from "ioredis";
import { call, registerAgent } from "./helpers/http.ts";
import { TEST_REDIS_URL } from "./helpers/env.ts";
import { TEST_DATABASE_URL, uniqueName } from "./helpers/env.ts";
import { nodeOnPrivatePostgres, startTestNode } from "./helpers/node.ts";
import { PrivatePostgres } from "./helpers/private-servers.ts";
import { send, sendOk } from "./messaging-helpers.ts";
import { until } from "./helpers/wait.ts";

async function timed<T>(f: () => Promise<T>): Promise<[T, number]> {
  const started = performance.now();
  const r = await f();
  return [r, performance.now() - started];
}

/** Waits (bounded) for `ok`, checking every 20 ms; the ms it took. */
const within = (what: string, ms: number, ok: () => Promise<boolean>) => until(ok, { ms, every: 20, what });

t.test("Postgres down: 503 + Retry-After within 2 s, nothing committed; back within a second", async (t) => {
  const { pg, schema, node, a, b } = await nodeOnPrivatePostgres(t, "pgout");
  t.equal((await send(node.url, a, b.id, "before")).status, 201);
  const first = await call(node.url, "GET", "/v1/messages/pending?timeout=0", { token: b.token });
  t.equal(first.body.messages.length, 1);

  await pg.stop();
  // 4 s of outage with requests coming: long enough for a client's reconnect back-off to grow
  const outageStarted = performance.now();
  for (let i = 0; performance.now() - outageStarted < 4000; i++) {
    const [s, ms] = await timed(() => send(node.url, a, b.id, `during ${i}`));
    t.equal(s.status, 503, `send ${i}: ${s.text}`);
    t.equal(s.body.error, "unavailable");
    t.ok(Number(s.headers.get("retry-after")) >= 1, "Retry-After");
    t.ok(ms < 2000, `send answered in ${Math.round(ms)} ms`);
    await new Promise((r) => setTimeout(r, 200)); // a paced client, within its rate limit
  }
  // a built mailbox and a cached token need only Redis
  const [p, pms] = await timed(() => call(node.url, "GET", "/v1/messages/pending?timeout=0", { token: b.token }));
  t.equal(p.status, 200, `pending: ${p.text}`);
  t.same(
    p.body.messages.map((m: { body: string }) => m.body),
    ["before"],
  );
  t.ok(pms < 2000);
  // an ack is durable in Postgres before it is answered: not now
  const [ack, ams] = await timed(() =>
    call(node.url, "POST", `/v1/messages/${first.body.messages[0].id}/ack`, { token: b.token }),
  );
  t.equal(ack.status, 503, `ack: ${ack.text}`);
  t.ok(ams < 2000);
  const ready = await call(node.url, "GET", "/readyz");
  t.equal(ready.status, 503);
  t.equal(ready.body.checks.postgres, "error");

  await pg.restart();
  const sendsIn = await within("sends back", 5000, async () => (await send(node.url, a, b.id, "after")).status === 201);
  t.ok(sendsIn < 1000, `sends back ${Math.round(sendsIn)} ms after Postgres`);
  const readyIn = await within("ready", 5000, async () => (await call(node.url, "GET", "/readyz")).status === 200);
  t.ok(sendsIn + readyIn < 1000, `ready ${Math.round(sendsIn + readyIn)} ms after Postgres`);

  // what answered 503 was not committed (a retrying client makes no duplicate)
  const sql = postgres(pg.url, { max: 1, onnotice: () => {} });
  t.teardown(() => sql.end({ timeout: 1 }));
  const rows = await sql.unsafe(`select body from "${schema}".messages order by id`);
  t.same(
    rows.map((r) => r["body"]).filter((body) => body !== "after"),
    ["before"],
  );
});

t.test("a send stuck behind a held lock answers in time, and what answered 503 is not committed", async (t) => {
  const node = await startTestNode(t);
  const a = await registerAgent(node.url, "a");
  const b = await registerAgent(node.url, "b");
  t.equal((await send(node.url, a, b.id, "warm")).status, 201);
  const locker = postgres(TEST_DATABASE_URL, { max: 1, onnotice: () => {} });
  t.teardown(() => locker.end({ timeout: 1 }));
  const held = await locker.reserve();
  await held`begin`;
  await held.unsafe(`lock table "${node.schema}".messages in access exclusive mode`);
  // the first send's statement waits on the lock; the next two queue behind it for the following batch
  const sends = [0, 1, 2].map(async (i) => {
    const [r, ms] = await timed(() => send(node.url, a, b.id, `stuck ${i}`));
    return { i, status: r.status, ms, retry: r.headers.get("retry-after") };
  });
  const answers = await Promise.all(sends);
  await held`rollback`;
  held.release();
  for (const r of answers) {
    t.ok(r.ms < 4000, `send ${r.i} answered ${r.status} in ${Math.round(r.ms)} ms (a 5 s client is still waiting)`);
    t.ok(r.status === 201 || (r.status === 503 && r.retry !== null), `send ${r.i}: ${r.status}`);
  }
  // wait until Postgres answers again, then: exactly the 201s are stored
  await within("unlocked", 5000, async () => (await send(node.url, a, b.id, "after")).status === 201);
  const rows = await locker.unsafe(
    `select body from "${node.schema}".messages where body like 'stuck %' order by body`,
  );
  t.same(
    rows.map((r) => r["body"]),
    answers.filter((r) => r.status === 201).map((r) => `stuck ${r.i}`),
  );
});

t.test(
  "Postgres down: a group member's long poll gets what was sent before, past the cursor its last ack left",
  async (t) => {
    const pg = await PrivatePostgres.start(t);
    const schema = uniqueName("pgoutg");
    const node = await startTestNode(t, { env: { DATABASE_URL: pg.url, PG_SCHEMA: schema }, schema });
    const a = await registerAgent(node.url, "a");
    const b = await registerAgent(node.url, "b");
    const g = await call(node.url, "POST", "/v1/groups", { token: a.token, json: { name: "g", members: [b.id] } });
    const post = async (body: string) =>
      (await call(node.url, "POST", `/v1/groups/${g.body.group.id}/messages`, { token: a.token, json: { body } })).body
        .id as string;
    const g1 = await post("g1");
    const g2 = await post("g2");
    const first = await call(node.url, "GET", "/v1/messages/pending?timeout=0", { token: b.token });
    t.same(
      first.body.messages.map((m: { id: string }) => m.id),
      [g1, g2],
    );
    t.equal((await call(node.url, "POST", `/v1/messages/${g1}/ack`, { token: b.token })).status, 204);
    const g3 = await post("g3"); // committed while b does not poll

    await pg.stop();
    const during = await call(node.url, "GET", "/v1/messages/pending?timeout=0", { token: b.token });
    t.equal(during.status, 200, `pending: ${during.text}`);
    t.same(
      during.body.messages.map((m: { id: string; delivery_count: number }) => [m.id, m.delivery_count]),
      [
        [g2, 2],
        [g3, 2],
      ],
      "past the cursor (g1 acked), from the group's Redis stream; counted as possibly delivered before",
    );
    t.equal(
      (await call(node.url, "POST", `/v1/messages/${g2}/ack`, { token: b.token })).status,
      503,
      "an ack waits for Postgres",
    );
    await pg.restart();
    await within(
      "acks back",
      5000,
      async () => (await call(node.url, "POST", `/v1/messages/${g2}/ack`, { token: b.token })).status === 204,
    );
    // a pooled connection Postgres's restart left dead may answer one poll 503 (its circuit opens and closes again):
    // retried, as the SDK retries a 503
    let after = await call(node.url, "GET", "/v1/messages/pending?timeout=0", { token: b.token });
    await within("a poll answered", 5000, async () => {
      if (after.status === 503)
        after = await call(node.url, "GET", "/v1/messages/pending?timeout=0", { token: b.token });
      return after.status !== 503;
    });
    t.equal(after.status, 200, after.text);
    t.same(
      after.body.messages.map((m: { id: string; delivery_count: number }) => [m.id, m.delivery_count]),
      [[g3, 2]],
      "g3 again, still counted 2",
    );
  },
);

t.test(
  "Postgres down: a node that never heard the messages serves an inbox from its Redis stream; a flushed stream serves nothing it cannot vouch for",
  async (t) => {
    const { pg, schema, node: one, a, b } = await nodeOnPrivatePostgres(t, "pgouts");
    const d1 = (await sendOk(one.url, a, b.id, "d1")).id as string;
    const d2 = (await sendOk(one.url, a, b.id, "d2")).id as string;
    const first = await call(one.url, "GET", "/v1/messages/pending?timeout=0", { token: b.token });
    t.same(
      first.body.messages.map((m: { id: string }) => m.id),
      [d1, d2],
    );
    t.equal((await call(one.url, "POST", `/v1/messages/${d1}/ack`, { token: b.token })).status, 204);
    const two = await startTestNode(t, {
      env: { DATABASE_URL: pg.url, PG_SCHEMA: schema },
      schema,
      prefix: one.prefix,
    });
    await call(two.url, "GET", "/v1/agents/me", { token: b.token }); // the token cached on the second node

    await pg.stop();
    const during = await call(two.url, "GET", "/v1/messages/pending?timeout=0", { token: b.token });
    t.equal(during.status, 200, `pending: ${during.text}`);
    t.same(
      during.body.messages.map((m: { id: string; delivery_count: number }) => [m.id, m.delivery_count]),
      [[d2, 2]],
      "d2 from b's Redis stream, which node two never heard; past the cursor d1's ack left",
    );
    const redis = new Redis(TEST_REDIS_URL);
    t.teardown(() => redis.disconnect());
    t.equal(await redis.del(`${one.prefix}st:{${b.id}}`), 1, "b's stream flushed");
    const flushed = await call(two.url, "GET", "/v1/messages/pending?timeout=0", { token: b.token });
    t.same(
      [flushed.status, flushed.body.messages],
      [200, []],
      "nothing: the stream no longer vouches for what follows the cursor",
    );
    await pg.restart();
    await within("Postgres back", 5000, async () => (await call(two.url, "GET", "/readyz")).status === 200);
    const after = await call(two.url, "GET", "/v1/messages/pending?timeout=0", { token: b.token });
    t.same(
      after.body.messages.map((m: { id: string; delivery_count: number }) => [m.id, m.delivery_count]),
      [[d2, 2]],
      "d2 from Postgres, counted 2: handed out before",
    );
  },
);
