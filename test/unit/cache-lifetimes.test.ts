// The caches' lifetimes under a retention (runtime/retention/cache-lifetimes.ts): the defaults, shortened to it.
import t from "tap";
import { STREAM_LOG_IDLE_MS } from "../../runtime/engines/stream-log.ts";
import { MemoryPubSub } from "../../runtime/engines/memory/pubsub.ts";
import { MemoryStreamLog } from "../../runtime/engines/memory/stream-log.ts";
import { inboxStream } from "../../runtime/messaging/stream-id.ts";
import { cacheLifetimes, MOMENT_RECORD_MS } from "../../runtime/retention/cache-lifetimes.ts";

t.test(
  "unlimited retention keeps the defaults; a shorter one bounds each cache; a longer one does not lengthen it",
  async (t) => {
    t.same(cacheLifetimes(null, null), { streamLogIdleMs: STREAM_LOG_IDLE_MS, momentRecordMs: MOMENT_RECORD_MS });
    t.same(cacheLifetimes(120_000, 60_000), { streamLogIdleMs: 120_000, momentRecordMs: 60_000 });
    t.same(cacheLifetimes(86_400_000, 86_400_000), {
      streamLogIdleMs: STREAM_LOG_IDLE_MS,
      momentRecordMs: MOMENT_RECORD_MS,
    });
  },
);

t.test("the in-process stream log drops an idle stream after the lifetime it was given", async (t) => {
  let now = 1_000_000;
  const log = new MemoryStreamLog(new MemoryPubSub(), () => now, 120_000);
  await log.append({ key: inboxStream("k"), seq: 1, id: "1", payload: "{}" }, "ch", "");
  now += 119_999;
  t.equal((await log.after(inboxStream("k"), 0)).length, 1, "kept just short of the lifetime");
  now += 1;
  t.same(await log.after(inboxStream("k"), 0), [], "gone at it");
});
