// The SDK's backoff (SPEC section 7) and its send throttle, on the fake clock. Against a real server: test/sdk-retry.test.ts.
import t from "tap";
import { backoffMs, DEFAULT_RETRY, parseRetryAfter, retryable } from "../../client/retry.ts";
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
  t.equal(backoffMs(DEFAULT_RETRY, 0, null, () => 0), 1000);
  t.equal(backoffMs(DEFAULT_RETRY, 0, null, () => 0.999), 1999);
  t.equal(parseRetryAfter(null), undefined);
  t.equal(parseRetryAfter("3"), 3000);
  t.equal(parseRetryAfter(new Date(10_000).toUTCString(), 4_000), 6000, "HTTP-date form");
  t.ok(retryable(429, "POST"), "429 means the request was not processed: safe to retry any method");
  t.ok(retryable(503, "GET"));
  t.notOk(retryable(503, "POST"), "a POST that may have been processed is not retried");
  t.notOk(retryable(400, "GET"));
});

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
