// The SDK's retries and throttle against a real node (on the fake clock). The backoff and throttle on their own:
// test/unit/sdk-backoff.test.ts.
import t from "tap";
import { Flock, FlockError } from "../client/index.ts";
import { FakeClock } from "./helpers/clock.ts";
import { randomIp, registerAgent } from "./helpers/http.ts";
import { startTestNode } from "./helpers/node.ts";

t.test("against the real server", async (t) => {
  const clock = new FakeClock(Date.now());
  const node = await startTestNode(t, { engine: "memory", now: clock.now });
  const ip = randomIp();
  let sent = 0;
  let stripRetryAfter = false;
  const fetchFromIp: typeof fetch = async (url, init) => {
    sent++;
    const res = await fetch(url, {
      ...init,
      headers: { ...(init?.headers as Record<string, string>), "x-forwarded-for": ip },
    });
    if (!stripRetryAfter) return res;
    const headers = new Headers(res.headers);
    headers.delete("retry-after");
    return new Response(await res.text(), { status: res.status, headers });
  };
  const sdk = () => new Flock({ baseUrl: node.url, fetch: fetchFromIp, clock, random: () => 0.5 });
  for (let i = 0; i < 10; i++) await sdk().register({ display_name: `r${i}` });

  t.test("429 with Retry-After: waits what the server says, then succeeds", async (t) => {
    clock.sleeps.length = 0;
    sent = 0;
    const r = await sdk().register({ display_name: "patient" });
    t.match(r.token, /^am_/);
    t.same(clock.sleeps, [6000], "one wait of Retry-After seconds");
    t.equal(sent, 2);
  });

  t.test("gives up after 5 attempts and raises the typed error", async (t) => {
    clock.advanceOnSleep = false; // time stands still: the bucket never refills
    clock.sleeps.length = 0;
    sent = 0;
    const err = await sdk()
      .register({ display_name: "hopeless" })
      .catch((e: unknown) => e);
    t.ok(err instanceof FlockError);
    t.equal((err as FlockError).status, 429);
    t.equal((err as FlockError).code, "rate_limited");
    t.ok((err as FlockError).retryAfter! >= 1);
    t.equal(sent, 5, "five attempts");
    t.equal(clock.sleeps.length, 4, "four waits between them");
  });

  t.test("429 without Retry-After: exponential backoff with jitter", async (t) => {
    stripRetryAfter = true;
    clock.advanceOnSleep = false;
    clock.sleeps.length = 0;
    sent = 0;
    const err = await sdk()
      .register({ display_name: "backoff" })
      .catch((e: unknown) => e);
    t.equal((err as FlockError).status, 429);
    t.same(clock.sleeps, [1500, 2500, 4500, 8500]);
    stripRetryAfter = false;
    clock.advanceOnSleep = true;
  });

  t.test("100 sends through the throttle stay under 8 per second: the server never answers 429", async (t) => {
    let refused = 0;
    const counting: typeof fetch = async (url, init) => {
      const res = await fetch(url, init);
      if (res.status === 429) refused++;
      return res;
    };
    const [x, y] = [await registerAgent(node.url, "producer"), await registerAgent(node.url, "consumer")];
    const producer = new Flock({ baseUrl: node.url, token: x.token, fetch: counting, clock });
    clock.advanceOnSleep = true;
    clock.sleeps.length = 0;
    const start = clock.now();
    for (let i = 0; i < 100; i++) await producer.send(y.id, `burst ${i}`);
    t.equal(refused, 0, "no 429 from a server allowing 10 per second");
    t.ok(clock.now() - start >= 99 * 125, "100 sends took at least 12.4 s of (fake) time");
    const received = await new Flock({ baseUrl: node.url, token: y.token }).pending({ limit: 100 });
    t.equal(received.length, 100);
  });

  t.test("AbortSignal cancels a request", async (t) => {
    const ac = new AbortController();
    ac.abort();
    const err = await sdk()
      .register({ display_name: "x" }, { signal: ac.signal })
      .catch((e: unknown) => e);
    t.equal((err as Error).name, "AbortError");
  });
});
