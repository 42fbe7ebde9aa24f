// A node killed in the middle of a webhook delivery leaves the agent's job to another node: the first node (a real
// process) holds the job and its attempt hangs at the receiver; it is killed with SIGKILL (nothing handed back), and
// the second node, once the job has gone unrenewed for FLOCK_WEBHOOK_CLAIM_IDLE_MS, takes it over (XAUTOCLAIM) and
// delivers the same event (the same webhook-id) again; the 2xx acknowledges it. And Redis losing every key: the
// node's sweep over Postgres queues the job again. Real Postgres and Redis.
import { Redis } from "ioredis";
import t from "tap";
import { redisKeys } from "../runtime/engines/redis/keys.ts";
import { TEST_DATABASE_URL, TEST_REDIS_URL } from "./helpers/env.ts";
import { call, registerAgent } from "./helpers/http.ts";
import { deletePrefix, ownPlace, startTestNode } from "./helpers/node.ts";
import { startProcess } from "./helpers/process.ts";
import { until } from "./helpers/wait.ts";
import { pending, sendOk } from "./messaging-helpers.ts";
import { Receiver } from "./webhook-receiver.ts";

t.test("a dead node's webhook job moves to a live node, which delivers it", async (t) => {
  const { schema, prefix } = ownPlace(t);
  const env = {
    DATABASE_URL: TEST_DATABASE_URL,
    PG_SCHEMA: schema,
    REDIS_URL: TEST_REDIS_URL,
    REDIS_PREFIX: prefix,
    FLOCK_WEBHOOK_ALLOW_PRIVATE: "1",
    FLOCK_WEBHOOK_CLAIM_IDLE_MS: "1500",
    FLOCK_WEBHOOK_SWEEP_MS: "1000",
  };
  const first = await startProcess(env);
  t.teardown(() => first.stop("SIGKILL"));
  const rx = await Receiver.start(t);
  // the first attempt hangs (the node dies holding it); every later one is taken
  rx.answer = (_r, n) => (n === 1 ? "hang" : 200);
  const [a, b] = [await registerAgent(first.url, "hooked"), await registerAgent(first.url, "sender")];
  const set = await call(first.url, "PUT", "/v1/agents/me/webhook", { token: a.token, json: { url: rx.url } });
  t.equal(set.status, 201);
  rx.secrets = [set.body.secret];
  const sent = await sendOk(first.url, b, a.id, "survive the node");
  await until(() => rx.got.length === 1, { ms: 10_000, what: "the first node's attempt" });

  const second = await startTestNode(t, { schema, prefix, env: { ...env } });
  t.same(second.svc.webhooks.holding(), [], "the live first node holds the job: the second does not take it");
  t.equal(await first.stop("SIGKILL"), null, "the first node is killed");
  await until(() => second.svc.webhooks.holding().includes(a.id), { ms: 15_000, what: "the job reclaimed" });
  await until(() => rx.got.length >= 2, { ms: 15_000, what: "the second node's attempt" });
  t.equal(rx.got[1]!.id, sent.id, "the same webhook-id");
  t.same(rx.got[1]!.verified, [true], "signed with the same secret");
  t.ok((rx.got[1]!.json.data["delivery_count"] as number) >= 2, "counted as a further attempt");
  await until(async () => (await pending(second.url, a)).length === 0, { ms: 10_000, what: "acked by the 2xx" });
});

t.test("a Redis flush loses no delivery: the sweep queues the job again from Postgres", async (t) => {
  const node = await startTestNode(t, {
    env: { FLOCK_WEBHOOK_ALLOW_PRIVATE: "1", FLOCK_WEBHOOK_CLAIM_IDLE_MS: "900", FLOCK_WEBHOOK_SWEEP_MS: "500" },
  });
  const rx = await Receiver.start(t);
  const [a, b] = [await registerAgent(node.url, "hooked"), await registerAgent(node.url, "sender")];
  const set = await call(node.url, "PUT", "/v1/agents/me/webhook", { token: a.token, json: { url: rx.url } });
  rx.secrets = [set.body.secret];
  await until(() => node.svc.webhooks.holding().includes(a.id), { ms: 10_000, what: "the job held" });
  const redis = new Redis(TEST_REDIS_URL);
  t.teardown(() => redis.disconnect());
  const queued = redisKeys(node.prefix).webhookQueued();
  t.ok(await redis.hget(queued, a.id), "the job is in Redis");
  await deletePrefix(node.prefix);
  t.equal(await redis.hget(queued, a.id), null, "and gone with the keys");
  await until(async () => (await redis.hget(queued, a.id)) !== null, { ms: 10_000, what: "the job queued again" });
  await until(() => node.svc.webhooks.holding().includes(a.id), { ms: 10_000, what: "and held again" });
  const sent = await sendOk(node.url, b, a.id, "after the flush");
  await until(() => rx.messages().includes(sent.id), { ms: 10_000, what: "the message delivered" });
  await until(async () => (await pending(node.url, a)).length === 0, { ms: 10_000, what: "and acked" });
});

t.test("a node closing cleanly cuts its attempts short and hands its jobs back at once", async (t) => {
  const { schema, prefix } = ownPlace(t);
  // a claim's idle time far longer than the test: only the hand-back can move the job
  const env = {
    FLOCK_WEBHOOK_ALLOW_PRIVATE: "1",
    FLOCK_WEBHOOK_CLAIM_IDLE_MS: "600000",
    FLOCK_WEBHOOK_SWEEP_MS: "500",
  };
  const first = await startTestNode(t, { schema, prefix, env });
  const rx = await Receiver.start(t);
  rx.answer = (_r, n) => (n === 1 ? "hang" : 200);
  const [a, b] = [await registerAgent(first.url, "hooked"), await registerAgent(first.url, "sender")];
  const set = await call(first.url, "PUT", "/v1/agents/me/webhook", { token: a.token, json: { url: rx.url } });
  rx.secrets = [set.body.secret];
  const sent = await sendOk(first.url, b, a.id, "hand me over");
  await until(() => rx.got.length === 1, { ms: 10_000, what: "the first node's attempt, hanging" });
  const second = await startTestNode(t, { schema, prefix, env });
  const started = performance.now();
  await first.close();
  t.ok(performance.now() - started < 5000, "the close did not wait out the attempt's 10 s time-out");
  await until(() => second.svc.webhooks.holding().includes(a.id), { ms: 10_000, what: "the job taken by the other" });
  await until(async () => (await pending(second.url, a)).length === 0, { ms: 10_000, what: "delivered and acked" });
  t.equal(rx.got.at(-1)!.id, sent.id);
});
