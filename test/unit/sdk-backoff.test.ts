// The SDK's backoff (SPEC section 7) and its send throttle, on the fake clock. Against a real server: test/sdk-retry.test.ts.
import t from "tap";
import {
  backoffMs,
  DEFAULT_RETRY,
  parseRetryAfter,
  RECONNECT,
  reconnectDelayMs,
  retryable,
} from "../../client/retry.ts";
import { Throttle } from "../../client/throttle.ts";
import { FakeClock } from "../helpers/clock.ts";

t.test("backoff follows SPEC section 7", async (t) => {
  const half = () => 0.5;
  t.equal(backoffMs(DEFAULT_RETRY, 0, "7", half), 7000, "Retry-After wins");
  t.same(
    [0, 1, 2, 3, 4, 5, 6, 7].map((a) => backoffMs(DEFAULT_RETRY, a, null, half)),
    [1500, 2500, 4500, 8500, 16500, 32500, 60500, 60500],
    "min(60, 2^attempt) + random(0, 1) seconds",
  );
  t.equal(
    backoffMs(DEFAULT_RETRY, 0, null, () => 0),
    1000,
  );
  t.equal(
    backoffMs(DEFAULT_RETRY, 0, null, () => 0.999),
    1999,
  );
  t.equal(parseRetryAfter(null), undefined);
  t.equal(parseRetryAfter("3"), 3000);
  t.equal(parseRetryAfter(new Date(10_000).toUTCString(), 4_000), 6000, "HTTP-date form");
  t.ok(retryable(429, "POST"), "429 means the request was not processed: safe to retry any method");
  t.ok(retryable(503, "GET"));
  t.notOk(retryable(503, "POST"), "a POST that may have been processed is not retried");
  t.notOk(retryable(400, "GET"));
});

t.test(
  "the WebSocket stream's reconnect waits double per failure, capped, spread from half to one and a half times",
  async (t) => {
    const at = (r: number) => [0, 1, 2, 3, 4, 5, 6, 7, 8].map((f) => reconnectDelayMs(f, () => r));
    t.same(
      at(0.5),
      [250, 500, 1000, 2000, 4000, 8000, 16000, 30000, 30000],
      "the middle: base x 2^failures, capped at 30 s",
    );
    t.same(at(0), [125, 250, 500, 1000, 2000, 4000, 8000, 15000, 15000], "the least: half");
    t.same(at(1), [375, 750, 1500, 3000, 6000, 12000, 24000, 45000, 45000], "the most: one and a half times");
    // 18,000 clients a restart drops at once: their first reconnects spread over the whole span, not one instant
    let seed = 7;
    const random = () => (seed = (seed * 16807) % 2147483647) / 2147483647;
    const waits = Array.from({ length: 18_000 }, () => reconnectDelayMs(0, random));
    const buckets = new Array(10).fill(0) as number[];
    for (const w of waits) buckets[Math.min(9, Math.floor(((w - RECONNECT.baseMs / 2) / RECONNECT.baseMs) * 10))]!++;
    t.ok(
      buckets.every((b) => b > 1_500 && b < 2_100),
      `each tenth of 125-375 ms holds about 1,800 (${buckets.join(" ")})`,
    );
  },
);

t.test("the throttle spaces a burst of 100 sends below 8 per second", async (t) => {
  const clock = new FakeClock();
  const throttle = new Throttle(8, clock);
  const start = clock.now();
  clock.advanceOnSleep = false; // every caller asks at the same instant; each waits for its own slot
  await Promise.all(Array.from({ length: 100 }, () => throttle.wait()));
  // when each send may go out: the first at once, the others after their wait
  const times = [start, ...clock.sleeps.map((ms) => start + ms)].sort((a, b) => a - b);
  t.equal(times.length, 100);
  for (let i = 8; i < times.length; i++) t.ok(times[i]! - times[i - 8]! >= 1000, `no 9 sends within a second (${i})`);
  t.ok(times.at(-1)! - times[0]! >= 99 * 125 - 1);
});
