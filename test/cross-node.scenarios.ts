// Cross-node scenarios, run on one Redis (test/multinode.test.ts, test/multiprocess.test.ts) and on a Redis Cluster
// (test/cluster.test.ts): two nodes in one process, and two server processes, on one Postgres schema and one Redis
// prefix; a send on one reaches a long poll and a WebSocket held on the other, and rate limits hold across both.
import type { Test } from "tap";
import { TEST_DATABASE_URL, TEST_REDIS_URL, uniqueName } from "./helpers/env.ts";
import { registerAgent } from "./helpers/http.ts";
import { deletePrefix, dropSchema, startTestNode, type TestNode } from "./helpers/node.ts";
import { startProcess } from "./helpers/process.ts";
import { ack, Client, pending, send, sendOk, warmUpAcross } from "./messaging-helpers.ts";
import { until } from "./helpers/wait.ts";

/** Two nodes in this process. */
export function twoNodes(t: Test, redisUrl?: string): void {
  const env = redisUrl ? { REDIS_URL: redisUrl } : undefined;
  // one fixed clock for both nodes: the rate-limit test must not depend on how fast the machine is
  const now = () => 1_800_000_000_000;
  let one: TestNode;
  let two: TestNode;
  t.before(async () => {
    one = await startTestNode(t, { now, env });
    two = await startTestNode(t, { schema: one.schema, prefix: one.prefix, now, env });
  });

  t.test("a send on one node wakes a long poll and a WebSocket on the other", async (t) => {
    const a = await registerAgent(one.url, "sender");
    const b = await registerAgent(one.url, "poller");
    const c = await registerAgent(two.url, "socket");
    const ws = await Client.open(two.url, { token: c.token });
    t.teardown(() => ws.close());
    await warmUpAcross(one.url, two.url, a, b, c, ws);

    const before = two.svc.hub.waiters.size;
    const polling = pending(two.url, b, "timeout=10");
    await until(() => two.svc.hub.waiters.size > before);

    const started = performance.now();
    const [toB, toC] = await Promise.all([
      sendOk(one.url, a, b.id, "to the poller"),
      sendOk(one.url, a, c.id, "to the socket"),
    ]);
    const [polled, frame] = await Promise.all([polling, ws.nextOfType("message")]);
    const ms = performance.now() - started;
    t.same(
      polled.map((m) => m.id),
      [toB.id],
    );
    t.equal(frame.message.id, toC.id);
    // a bound that shows a wake-up, far below the 10 s poll timeout, not a speed target (bench/ measures speed)
    t.ok(ms < 1000, `both served ${ms.toFixed(1)} ms after the sends started (woken, not timed out)`);
  });

  t.test("the 11th send within a second answers 429 across both nodes", async (t) => {
    const a = await registerAgent(one.url, "burst");
    const b = await registerAgent(one.url, "target");
    const results: number[] = [];
    for (let i = 0; i < 10; i++) results.push((await send(i % 2 ? two.url : one.url, a, b.id, `n${i}`)).status);
    const eleventh = await send(two.url, a, b.id, "eleventh");
    const twelfth = await send(one.url, a, b.id, "twelfth");
    t.same(results, Array(10).fill(201), "ten sends pass, alternating nodes");
    t.equal(eleventh.status, 429, "the 11th, on the other node");
    t.equal(twelfth.status, 429);
    t.equal(eleventh.body.error, "rate_limited");
  });
}

/** Two real server processes. */
export async function twoProcesses(t: Test, redisUrl: string = TEST_REDIS_URL): Promise<void> {
  const schema = uniqueName("procs");
  const prefix = `flocktest:${uniqueName("procs")}:`;
  const env = {
    DATABASE_URL: TEST_DATABASE_URL,
    REDIS_URL: redisUrl,
    PG_SCHEMA: schema,
    REDIS_PREFIX: prefix,
    TRUST_PROXY: "1",
  };
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
    const [toB, toC] = await Promise.all([
      sendOk(one.url, a, b.id, `poll ${round}`),
      sendOk(one.url, a2, c.id, `ws ${round}`),
    ]);
    const [polled, frame] = await Promise.all([polling, ws.nextOfType("message")]);
    const ms = performance.now() - started;
    t.same(
      polled.map((m) => m.id),
      [toB.id],
      `round ${round}: the long poll on the other process got it`,
    );
    t.equal(frame.message.id, toC.id, `round ${round}: the WebSocket on the other process got it`);
    t.ok(ms < 1000, `round ${round}: both served ${ms.toFixed(1)} ms after the sends started (woken, not timed out)`);
    times.push(ms);
    await Promise.all([ack(two.url, b, toB.id), ack(two.url, c, toC.id)]);
  }
  t.comment(`best round ${Math.min(...times).toFixed(1)} ms`);
}
