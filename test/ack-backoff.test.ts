// While a member's acks fail (Postgres out: an ack answers 503, and polls are served from the Redis streams), its long polls do not hand the same message back in a
// hot loop (issue 38, case 3): a redelivery waits a backoff (1 s, doubling, on the node's clock, moved here by hand).
// Once an ack succeeds, polls answer at once again.
import t from "tap";
import { call } from "./helpers/http.ts";
import { nodeOnPrivatePostgres } from "./helpers/node.ts";
import { sendOk } from "./messaging-helpers.ts";
import { until } from "./helpers/wait.ts";

t.test("a long poll whose acks fail backs off instead of looping", async (t) => {
  // the node's clock, moved by hand: the backoff reads it, so the test decides when a second has passed
  let clock = Date.now();
  const { pg, node, a, b } = await nodeOnPrivatePostgres(t, "ackback", { now: () => clock });
  const m = (await sendOk(node.url, a, b.id, "stuck")).id as string;
  const poll = () => call(node.url, "GET", "/v1/messages/pending?timeout=0", { token: b.token });
  t.same(
    (await poll()).body.messages.map((x: { delivery_count: number }) => x.delivery_count),
    [1],
  );

  await pg.stop();
  t.equal((await call(node.url, "POST", `/v1/messages/${m}/ack`, { token: b.token })).status, 503, "the ack fails");
  // a client retrying as fast as it can: 20 polls at each step of the clock
  const handed: number[] = [];
  const statuses = new Set<number>();
  for (const step of [0, 500, 500, 500, 1000, 1000, 1000]) {
    clock += step;
    let times = 0;
    for (let i = 0; i < 20; i++) {
      const r = await poll();
      statuses.add(r.status);
      for (const x of r.body.messages as { id: string }[]) if (x.id === m) times++;
    }
    handed.push(times);
  }
  t.same([...statuses], [200], "each poll answered at once, 200");
  // at +0 ms it goes out once; then the next hand-out waits 1 s (at +1000 ms), the one after 2 s more (+3000 ms)
  t.same(
    handed,
    [1, 0, 1, 0, 0, 1, 0],
    "handed out once per backoff (1 s, then 2 s) of the node's clock, not once per poll",
  );

  await pg.restart();
  await until(async () => (await call(node.url, "POST", `/v1/messages/${m}/ack`, { token: b.token })).status === 204, {
    ms: 5000,
    every: 50,
    what: "the ack to succeed",
  });
  const after = await poll();
  t.same(after.body.messages, [], "acknowledged: gone, and polls answer at once");
  await until(async () => (await call(node.url, "GET", "/readyz")).status === 200, {
    ms: 5000,
    every: 50,
    what: "/readyz",
  });
  const next = (await sendOk(node.url, a, b.id, "next")).id as string;
  const started = performance.now();
  const got = await poll();
  t.same(
    got.body.messages.map((x: { id: string }) => x.id),
    [next],
  );
  t.ok(performance.now() - started < 1000, "no backoff once an ack succeeded");
});
