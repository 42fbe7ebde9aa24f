// An ack repeated is an ack, so the SDK retries one that met a 503 (a node's refusing last second during a restart,
// an outage) or got no answer, as it would an idempotent method; and a `messages()` long-poll loop whose ack still
// failed waits before it polls again, rather than being handed the same message in a tight loop (the chaos suite's
// rolling faults saw one message handed out 9 times in 40 ms before this). A real node; the faults are injected
// through the SDK's own `fetch` option, in front of the real one.
import t from "tap";
import { Flock, type RetryEvent } from "../client/index.ts";
import { startTestNode } from "./helpers/node.ts";

const refusing = () =>
  new Response(JSON.stringify({ error: "unavailable", message: "the node is shutting down" }), {
    status: 503,
    headers: { "content-type": "application/json", "retry-after": "0" },
  });

/** A fetch that answers the first `n` acks 503 (Retry-After: 0) and passes everything to the node; counts requests. */
function acksRefused(n: number) {
  const seen = { polls: 0, acks: 0, refused: 0 };
  const impl: typeof fetch = async (input, init) => {
    const url = String(input);
    if (url.includes("/ack")) {
      seen.acks++;
      if (seen.refused < n) {
        seen.refused++;
        return refusing();
      }
    }
    if (url.includes("/v1/messages/pending")) seen.polls++;
    return globalThis.fetch(input, init);
  };
  return { seen, impl };
}

t.test("an ack answered 503 is retried, and the message does not come again", async (t) => {
  const node = await startTestNode(t);
  const a = new Flock({ baseUrl: node.url, sendsPerSecond: 1000 });
  await a.register({ display_name: "sender" });
  const { seen, impl } = acksRefused(2);
  const retries: RetryEvent[] = [];
  const b = new Flock({ baseUrl: node.url, sendsPerSecond: 1000, fetch: impl, onRetry: (e) => retries.push(e) });
  const bob = (await b.register({ display_name: "receiver" })).agent.id;
  await a.send(bob, "once");
  for await (const msg of b.messages({ timeout: 2 })) {
    t.equal(msg.body, "once");
    break;
  }
  t.equal(seen.refused, 2);
  t.equal(seen.acks, 3, "two refused, the third taken");
  t.match(retries, [
    { method: "POST", status: 503, retry: 1 },
    { method: "POST", status: 503, retry: 2 },
  ]);
  t.same(await b.pending({ timeout: 0 }), [], "acknowledged: not handed out again");
});

t.test("acking twice is harmless: the second ack of a message answers as the first", async (t) => {
  const node = await startTestNode(t);
  const a = new Flock({ baseUrl: node.url, sendsPerSecond: 1000 });
  const b = new Flock({ baseUrl: node.url, sendsPerSecond: 1000 });
  await a.register({ display_name: "sender" });
  const bob = (await b.register({ display_name: "receiver" })).agent.id;
  const sent = await a.send(bob, "x");
  await b.ack(sent.id);
  await t.resolves(b.ack(sent.id), "the repeat (what a retry after a lost answer sends) succeeds too");
  t.same(await b.pending({ timeout: 0 }), []);
});

t.test("a poll loop whose ack keeps failing waits between polls, doubling, instead of polling at once", async (t) => {
  const node = await startTestNode(t);
  const a = new Flock({ baseUrl: node.url, sendsPerSecond: 1000 });
  await a.register({ display_name: "sender" });
  const { seen, impl } = acksRefused(Infinity);
  const sleeps: number[] = [];
  // a clock that records each wait and returns at once: the test drives time, it does not race it
  const clock = { now: () => Date.now(), sleep: async (ms: number) => void sleeps.push(ms) };
  const b = new Flock({ baseUrl: node.url, sendsPerSecond: 1000, fetch: impl, clock, retry: { maxAttempts: 1 } });
  const bob = (await b.register({ display_name: "receiver" })).agent.id;
  await a.send(bob, "never acked");
  let handed = 0;
  for await (const msg of b.messages({ timeout: 1, ackOnExit: false })) {
    t.equal(msg.body, "never acked");
    if (++handed === 4) break;
  }
  t.equal(seen.polls, 4, "four polls, each answered the unacknowledged message again");
  t.same(sleeps, [1000, 2000, 4000], "and between them the loop waited 1, 2, 4 s");
});
