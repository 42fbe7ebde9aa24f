// The stream log contract (test/stream-log-engine.contract.ts) on Redis, and its idle expiry; on the memory engine:
// test/unit/stream-log-engine-memory.test.ts.
import { Redis } from "ioredis";
import t from "tap";
import { RedisPubSub } from "../runtime/engines/redis/pubsub.ts";
import { RedisStreamLog } from "../runtime/engines/redis/stream-log.ts";
import { redisKeys } from "../runtime/engines/redis/keys.ts";
import { inboxStream } from "../runtime/messaging/stream-id.ts";
import { defineScripts } from "../runtime/engines/redis/scripts.ts";
import { type Published, STREAM_LOG_IDLE_MS } from "../runtime/engines/stream-log.ts";
import { streamLogContract } from "./stream-log-engine.contract.ts";
import { TEST_REDIS_URL, uniqueName } from "./helpers/env.ts";
import { deletePrefix } from "./helpers/node.ts";

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
  const m: Published = { key: inboxStream("x"), seq: 1, id: "1", payload: "{}" };
  await engine.append(m, "c", "");
  const ttl = await cmd.pttl(keys.streamLog(m.key));
  t.ok(ttl > STREAM_LOG_IDLE_MS - 60_000 && ttl <= STREAM_LOG_IDLE_MS, `pttl ${ttl}`);
});
