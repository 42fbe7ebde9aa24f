// While a member's acks fail (Postgres out: an ack answers 503, and polls are served from the Redis streams), its long polls do not hand the same message back in a
// hot loop (issue 38, case 3): a redelivery waits a backoff (1 s, doubling), and delivery_count counts real
// hand-outs. Once an ack succeeds, polls answer at once again.
import t from "tap";
import { call } from "./helpers/http.ts";
import { nodeOnPrivatePostgres } from "./helpers/node.ts";
import { sendOk } from "./messaging-helpers.ts";
import { until } from "./helpers/wait.ts";

t.test("a long poll whose acks fail backs off instead of looping", async (t) => {
  const { pg, node, a, b } = await nodeOnPrivatePostgres(t, "ackback");
  const m = (await sendOk(node.url, a, b.id, "stuck")).id as string;
  const poll = () => call(node.url, "GET", "/v1/messages/pending?timeout=0", { token: b.token });
  t.same((await poll()).body.messages.map((x: { delivery_count: number }) => x.delivery_count), [1]);

  await pg.stop();
  t.equal((await call(node.url, "POST", `/v1/messages/${m}/ack`, { token: b.token })).status, 503, "the ack fails");
  // a client retrying as fast as it can for 1.5 s
  const counts: number[] = [];
  let polls = 0;
  const statuses = new Set<number>();
  const end = performance.now() + 1500;
  while (performance.now() < end) {
    const r = await poll();
    polls++;
    statuses.add(r.status);
    for (const x of r.body.messages as { id: string; delivery_count: number }[]) if (x.id === m) counts.push(x.delivery_count);
  }
  t.ok(polls > 20, `${polls} polls`);
  t.same([...statuses], [200], "each answered at once, 200");
  t.ok(counts.length >= 1 && counts.length <= 2, `handed out ${counts.length} times in 1.5 s (counts ${counts.join(",")}), not once per poll`);

  await pg.restart();
  await until(async () => (await call(node.url, "POST", `/v1/messages/${m}/ack`, { token: b.token })).status === 204, { ms: 5000, every: 50, what: "the ack to succeed" });
  const after = await poll();
  t.same(after.body.messages, [], "acknowledged: gone, and polls answer at once");
  await until(async () => (await call(node.url, "GET", "/readyz")).status === 200, { ms: 5000, every: 50, what: "/readyz" });
  const next = (await sendOk(node.url, a, b.id, "next")).id as string;
  const started = performance.now();
  const got = await poll();
  t.same(got.body.messages.map((x: { id: string }) => x.id), [next]);
  t.ok(performance.now() - started < 1000, "no backoff once an ack succeeded");
});
