// Two real server processes on one Postgres schema and one Redis prefix: a send on one reaches a long poll and a
// WebSocket held on the other.
import t from "tap";
import { TEST_DATABASE_URL, TEST_REDIS_URL, uniqueName } from "./helpers/env.ts";
import { registerAgent } from "./helpers/http.ts";
import { deletePrefix, dropSchema } from "./helpers/node.ts";
import { startProcess } from "./helpers/process.ts";
import { ack, Client, pending, sendOk, warmUpAcross } from "./messaging-helpers.ts";

t.test("a sender on one process, a long poll and a WebSocket on another", async (t) => {
  const schema = uniqueName("procs");
  const prefix = `flocktest:${uniqueName("procs")}:`;
  const env = { DATABASE_URL: TEST_DATABASE_URL, REDIS_URL: TEST_REDIS_URL, PG_SCHEMA: schema, REDIS_PREFIX: prefix, TRUST_PROXY: "1" };
  const one = await startProcess(env);
  t.teardown(() => one.stop());
  const two = await startProcess(env);
  t.teardown(async () => {
    await two.stop();
    await dropSchema(schema);
    await deletePrefix(prefix);
  });
  const a = await registerAgent(one.url, "sender");
  // a second sender for the WebSocket: one sender's twelve sends could land within a second when delivery is
  // fast, over its limit of ten per second
  const a2 = await registerAgent(one.url, "socket sender");
  const b = await registerAgent(one.url, "poller");
  const c = await registerAgent(two.url, "socket");
  const ws = await Client.open(two.url, { token: c.token });
  t.teardown(() => ws.close());
  await warmUpAcross(one.url, two.url, a, b, c, ws);

  // Each round must be a wake-up (far below the 10 s poll timeout). How fast is for bench/ to measure: a test bound
  // on speed fails on a slow machine, not on a regression.
  const times: number[] = [];
  for (let round = 0; round < 5; round++) {
    const polling = pending(two.url, b, "timeout=10");
    const started = performance.now();
    const [toB, toC] = await Promise.all([sendOk(one.url, a, b.id, `poll ${round}`), sendOk(one.url, a2, c.id, `ws ${round}`)]);
    const [polled, frame] = await Promise.all([polling, ws.nextOfType("message")]);
    const ms = performance.now() - started;
    t.same(polled.map((m) => m.id), [toB.id], `round ${round}: the long poll on the other process got it`);
    t.equal(frame.message.id, toC.id, `round ${round}: the WebSocket on the other process got it`);
    t.ok(ms < 1000, `round ${round}: both served ${ms.toFixed(1)} ms after the sends started (woken, not timed out)`);
    times.push(ms);
    await Promise.all([ack(two.url, b, toB.id), ack(two.url, c, toC.id)]);
  }
  t.comment(`best round ${Math.min(...times).toFixed(1)} ms`);
});
