import t from "tap";
import { registerAgent } from "./helpers/http.ts";
import { startTestNode } from "./helpers/node.ts";
import { Client, pending, send, sendOk, until, warmUpAcross } from "./messaging-helpers.ts";

t.test("two nodes sharing one Postgres schema and one Redis prefix", async (t) => {
  // one fixed clock for both nodes: the rate-limit test must not depend on how fast the machine is
  const now = () => 1_800_000_000_000;
  const one = await startTestNode(t, { now });
  const two = await startTestNode(t, { schema: one.schema, prefix: one.prefix, now });
  const hubTwo = two.svc.hub;

  t.test("a send on one node wakes a long poll and a WebSocket on the other", async (t) => {
    const a = await registerAgent(one.url, "sender");
    const b = await registerAgent(one.url, "poller");
    const c = await registerAgent(two.url, "socket");
    const ws = await Client.open(two.url, { token: c.token });
    t.teardown(() => ws.close());
    await warmUpAcross(one.url, two.url, a, b, c, ws);

    const before = hubTwo.waiters.size;
    const polling = pending(two.url, b, "timeout=10");
    await until(() => hubTwo.waiters.size > before);

    const started = performance.now();
    const [toB, toC] = await Promise.all([sendOk(one.url, a, b.id, "to the poller"), sendOk(one.url, a, c.id, "to the socket")]);
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
});
