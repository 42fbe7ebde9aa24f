import { Redis } from "ioredis";
import t from "tap";
import { MemoryPubSub } from "../runtime/engines/memory/pubsub.ts";
import { MemoryStreamLog } from "../runtime/engines/memory/stream-log.ts";
import { RedisPubSub } from "../runtime/engines/redis/pubsub.ts";
import { RedisStreamLog } from "../runtime/engines/redis/stream-log.ts";
import { redisKeys } from "../runtime/engines/redis/keys.ts";
import { defineScripts } from "../runtime/engines/redis/scripts.ts";
import { contiguous, type Published, STREAM_LOG_IDLE_MS } from "../runtime/engines/stream-log.ts";
import { streamLogContract } from "./stream-log-engine.contract.ts";
import { TEST_REDIS_URL, uniqueName } from "./helpers/env.ts";
import { FakeClock } from "./helpers/clock.ts";
import { deletePrefix } from "./helpers/node.ts";

const m = (seq: number): Published => ({ key: "k", seq, id: String(seq), payload: "{}" });

t.test("contiguous: the run that follows a number without a hole", async (t) => {
  t.same(contiguous([m(3), m(4), m(6)], 2), [m(3), m(4)]);
  t.same(contiguous([m(3), m(4)], 1), [], "a hole right after the number: nothing");
  t.same(contiguous([], 5), []);
});

t.test("memory engine", async (t) => {
  streamLogContract(t, async () => {
    const pubsub = new MemoryPubSub();
    return { engine: new MemoryStreamLog(pubsub), pubsub, close: async () => {} };
  });
});

t.test("memory engine: a log idle for STREAM_LOG_IDLE_MS is dropped, on the node's clock", async (t) => {
  const clock = new FakeClock();
  const log = new MemoryStreamLog(new MemoryPubSub(), () => clock.now());
  await log.append(m(1), "c", "");
  clock.t += STREAM_LOG_IDLE_MS - 1;
  await log.append(m(2), "c", "");
  clock.t += STREAM_LOG_IDLE_MS - 1;
  t.same((await log.after("k", 0)).map((e) => e.seq), [1, 2], "an append keeps the log alive");
  clock.t += 1;
  t.same(await log.after("k", 0), []);
});

t.test("redis engine", async (t) => {
  const prefix = `flocktest:${uniqueName("sl")}:`;
  const cmd = new Redis(TEST_REDIS_URL);
  const sub = new Redis(TEST_REDIS_URL);
  const keys = redisKeys(prefix);
  const engine = new RedisStreamLog(defineScripts(cmd), keys);
  t.teardown(async () => {
    cmd.disconnect();
    sub.disconnect();
    await deletePrefix(prefix);
  });
  streamLogContract(t, async () => ({ engine, pubsub: new RedisPubSub(cmd, sub, keys), close: async () => {} }));

  t.test("a log expires STREAM_LOG_IDLE_MS after its last append", async (t) => {
    await engine.append({ ...m(1), key: "x" }, "c", "");
    const ttl = await cmd.pttl(keys.streamLog("x"));
    t.ok(ttl > STREAM_LOG_IDLE_MS - 60_000 && ttl <= STREAM_LOG_IDLE_MS, `pttl ${ttl}`);
  });
});
