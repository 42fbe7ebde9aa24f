// The pacing of an endpoint's failures (runtime/webhooks/backoff.ts), on a clock and a chance given by hand: the
// pause doubles to its cap with bounded jitter, and a run of failures disables the endpoint once it is older than the
// disable delay (a day), not before; a success ends the run.
import t from "tap";
import { FailureRun, retryDelayMs } from "../../runtime/webhooks/backoff.ts";
import { WEBHOOK_LIMITS } from "../../runtime/limits/policies.ts";

const p = { firstMs: 1000, maxMs: 60_000, jitter: 0.2 };

t.test("exponential, capped, with jitter either way", async (t) => {
  const mid = () => 0.5;
  t.same(
    [1, 2, 3, 4, 5, 6, 7, 8].map((n) => retryDelayMs(n, mid, p)),
    [1000, 2000, 4000, 8000, 16_000, 32_000, 60_000, 60_000],
  );
  t.equal(
    retryDelayMs(1, () => 0, p),
    800,
    "jitter takes up to a fifth",
  );
  t.equal(
    retryDelayMs(1, () => 0.999999, p),
    1200,
    "or adds up to a fifth",
  );
  t.equal(retryDelayMs(10_000, mid, p), 60_000, "no overflow for a long run");
  t.ok(retryDelayMs(1) >= WEBHOOK_LIMITS.backoff.firstMs * 0.8, "the limits table's policy by default");
});

t.test("a run of failures disables after the delay, on the hand clock", async (t) => {
  const day = 86_400_000;
  let now = 1_900_000_000_000;
  const run = new FailureRun(day, () => 0.5);
  const first = run.failed(now);
  t.same(first, { disable: false, retryInMs: 1000 });
  t.equal(run.since, now, "the run began at the first failure");
  now += day - 1;
  t.equal(run.failed(now).disable, false, "a millisecond short of a day: still on");
  now += 1;
  t.equal(run.failed(now).disable, true, "a day of failures: disabled");
  t.equal(run.succeeded(), true, "a success ends a run");
  t.equal(run.since, undefined);
  t.equal(run.failures, 0);
  t.equal(run.succeeded(), false, "and with none running there is nothing to clear");
  t.same(run.failed(now + day), { disable: false, retryInMs: 1000 }, "a new run starts from the beginning");
});
