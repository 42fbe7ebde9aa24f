// Redis killed under a running node: what needs Redis answers 503 unavailable with Retry-After within 2 s (never a
// 500, never a hang), what needs only Postgres keeps working, and service is back within about a second of Redis.
import t from "tap";
import { call, registerAgent } from "./helpers/http.ts";
import { startTestNode } from "./helpers/node.ts";
import { PrivateRedis } from "./helpers/private-servers.ts";
import { send } from "./messaging-helpers.ts";
import { until } from "./helpers/wait.ts";

async function timed<T>(f: () => Promise<T>): Promise<[T, number]> {
  const started = performance.now();
  const r = await f();
  return [r, performance.now() - started];
}

t.test("Redis down: 503 + Retry-After within 2 s; back within a second of its return", async (t) => {
  const redis = await PrivateRedis.start(t);
  const node = await startTestNode(t, { env: { REDIS_URL: redis.url, REDIS_PREFIX: "out:" }, prefix: "out:" });
  const a = await registerAgent(node.url, "a");
  const b = await registerAgent(node.url, "b");
  t.equal((await send(node.url, a, b.id, "before")).status, 201);
  const moment = await call(node.url, "POST", "/v1/moments", {
    token: a.token,
    json: { content: "hi", visibility: "public" },
  });
  t.equal(moment.status, 201);

  await redis.kill();
  // a send whose batch started before the node saw Redis go is committed and answered 201 (its publish failed: the
  // node's own sockets and polls had it, the other nodes' position checks find it); its failed append opens the circuit
  const committed: string[] = [];
  for (let i = 0; i < 3 && committed.length < 3;) {
    const [s, ms] = await timed(() => send(node.url, a, b.id, `during ${i + committed.length}`));
    if (s.status === 201 && i === 0) {
      committed.push(s.body.body);
      continue;
    }
    i++;
    t.equal(s.status, 503, `send ${i}: ${s.text}`);
    t.equal(s.body.error, "unavailable");
    t.ok(Number(s.headers.get("retry-after")) >= 1, "Retry-After");
    t.ok(ms < 2000, `send answered in ${Math.round(ms)} ms`);
  }
  // what Postgres holds is handed out (nothing of a message lives in Redis) ...
  const [held, hms] = await timed(() => call(node.url, "GET", "/v1/messages/pending?timeout=10", { token: b.token }));
  t.equal(held.status, 200, `long poll with a message waiting: ${held.text}`);
  t.same(
    (held.body.messages as { body: string }[]).map((m) => m.body),
    ["before", ...committed],
  );
  t.ok(committed.length <= 1, `at most the first send after the kill committed (${committed.length})`);
  t.ok(hms < 2000, `answered in ${Math.round(hms)} ms`);
  // ... but a poll with nothing to hand out cannot be woken from another node: 503 at once, not a blind wait
  const [p, pms] = await timed(() => call(node.url, "GET", "/v1/messages/pending?timeout=10", { token: a.token }));
  t.equal(p.status, 503, `long poll: ${p.text}`);
  t.ok(Number(p.headers.get("retry-after")) >= 1, "Retry-After");
  t.ok(pms < 2000, `long poll answered in ${Math.round(pms)} ms`);
  const ready = await call(node.url, "GET", "/readyz");
  t.equal(ready.status, 503);
  t.equal(ready.body.checks.redis, "error");
  t.equal(ready.body.checks.postgres, "ok");
  // needs only Postgres (and the node's token cache): still served
  const read = await call(node.url, "GET", `/v1/moments/${moment.body.id}`, { token: a.token });
  t.equal(read.status, 200, `Postgres-only read: ${read.text}`);

  await redis.restart();
  const back = performance.now();
  await until(async () => (await send(node.url, a, b.id, "after")).status === 201, {
    ms: 5000,
    every: 20,
    what: "a send answered 201",
  });
  const took = performance.now() - back;
  t.ok(took < 1500, `sends back ${Math.round(took)} ms after Redis`);
  await until(async () => (await call(node.url, "GET", "/readyz")).status === 200, {
    ms: 5000,
    every: 20,
    what: "/readyz 200",
  });
  const readyIn = performance.now() - back;
  t.ok(readyIn < 1000, `ready ${Math.round(readyIn)} ms after Redis`);
  const got = await call(node.url, "GET", "/v1/messages/pending?timeout=0", { token: b.token });
  t.equal(got.status, 200);
  t.same(
    got.body.messages.map((m: { body: string }) => m.body),
    ["before", ...committed, "after"],
  );
  // wake-ups are subscribed again: a waiting long poll is answered by a send
  for (const m of got.body.messages as { id: string }[])
    await call(node.url, "POST", `/v1/messages/${m.id}/ack`, { token: b.token });
  const waiting = node.svc.hub.waiters.size;
  const poll = call(node.url, "GET", "/v1/messages/pending?timeout=10", { token: b.token });
  await until(() => node.svc.hub.waiters.size > waiting, { what: "the long poll to wait" });
  const [woken, wms] = await timed(async () => {
    t.equal((await send(node.url, a, b.id, "wake")).status, 201);
    return poll;
  });
  t.same(
    woken.body.messages.map((m: { body: string }) => m.body),
    ["wake"],
  );
  t.ok(wms < 1000, `long poll woken in ${Math.round(wms)} ms`);
});
