// The stream log contract (test/stream-log-engine.contract.ts) on the memory engine, and its idle expiry on the
// node's clock; on Redis: test/stream-log-engine-redis.test.ts.
import t from "tap";
import { MemoryPubSub } from "../../runtime/engines/memory/pubsub.ts";
import { MemoryStreamLog } from "../../runtime/engines/memory/stream-log.ts";
import { contiguous, type Published, STREAM_LOG_IDLE_MS } from "../../runtime/engines/stream-log.ts";
import { streamLogContract } from "../stream-log-engine.contract.ts";
import { FakeClock } from "../helpers/clock.ts";
import { inboxStream } from "../../runtime/messaging/stream-id.ts";

const K = inboxStream("k");
const m = (seq: number): Published => ({ key: K, seq, id: String(seq), payload: "{}" });

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
  t.same(
    (await log.after(K, 0)).map((e) => e.seq),
    [1, 2],
    "an append keeps the log alive",
  );
  clock.t += 1;
  t.same(await log.after(K, 0), []);
});
