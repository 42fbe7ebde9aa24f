// The SDK's message iterator acknowledges group messages in batches, one cumulative ack per thread, against a real
// node: over the WebSocket every `messages` handled (or once the batch's timer fires, driven here by hand), when
// polling once per poll's page; direct messages one by one as before. What a handler finished is acknowledged when
// the loop stops, and a message whose handler threw, and what follows it, come again.
import t from "tap";
import { Flock } from "../client/index.ts";
import type { Clock } from "../client/throttle.ts";
import { startTestNode } from "./helpers/node.ts";
import { until } from "./helpers/wait.ts";

/** A clock whose sleeps end only when the test says so. */
function manualClock(): Clock & { fire(): void; sleeping(): number } {
  let wakes: (() => void)[] = [];
  return {
    now: () => Date.now(),
    sleep: () => new Promise<void>((resolve) => wakes.push(resolve)),
    fire() {
      const w = wakes;
      wakes = [];
      for (const f of w) f();
    },
    sleeping: () => wakes.length,
  };
}

t.test("group messages are acknowledged in batches, cumulatively", async (t) => {
  const node = await startTestNode(t);
  const clock = manualClock();
  const a = new Flock({ baseUrl: node.url, sendsPerSecond: 1000 });
  const b = new Flock({ baseUrl: node.url, sendsPerSecond: 1000, clock });
  await a.register({ display_name: "sender" });
  await b.register({ display_name: "receiver" });
  const bob = await b.me();
  const g = await a.createGroup({ name: "batch", members: [bob.id] });
  const bodies = ["1", "2", "3", "4", "5", "6", "7"];
  for (const body of bodies) await a.sendGroup(g.id, body);
  const waiting = async () =>
    (await a.pending({ timeout: 0 }).then(() => b.pending({ timeout: 0 }))).map((m) => m.body);

  t.test("over the WebSocket: every 5 handled, on the timer, and at the stop", async (t) => {
    const ac = new AbortController();
    const seen: { body: string; waiting: string[] }[] = [];
    for await (const msg of b.messages({ transport: "ws", signal: ac.signal, ackBatch: { messages: 5, ms: 50 } })) {
      seen.push({ body: msg.body, waiting: await waiting() });
      if (msg.body === "7") ac.abort();
    }
    t.same(seen[2], { body: "3", waiting: bodies }, "while 3 is handled, 1 and 2 wait for their batch");
    t.same(seen[5], { body: "6", waiting: ["6", "7"] }, "the fifth ended a batch: 1-5 acknowledged in one ack");
    t.same(await waiting(), [], "6 and 7 acknowledged as the loop stopped");

    // the timer: two handled, then nothing more arrives; the batch goes when its time is up
    for (const body of ["8", "9"]) await a.sendGroup(g.id, body);
    const ac2 = new AbortController();
    const handled: string[] = [];
    const loop = (async () => {
      for await (const msg of b.messages({ transport: "ws", signal: ac2.signal, ackBatch: { messages: 5, ms: 50 } }))
        handled.push(msg.body);
    })();
    await until(() => handled.length >= 2 && clock.sleeping() > 0, { what: "both handled and the batch's timer set" });
    t.same(await waiting(), ["8", "9"], "both handled, held for the timer");
    clock.fire();
    await until(async () => (await waiting()).length === 0, { every: 5, what: "the timer's batch to be acknowledged" });
    t.same(await waiting(), [], "the timer's batch acknowledged both");
    ac2.abort();
    await loop;
  });

  t.test(
    "a handler that throws (ackOnExit: false): what it finished is acknowledged, the failed one and the rest come again",
    async (t) => {
      for (const body of ["a", "b", "c", "d"]) await a.sendGroup(g.id, body);
      const err = await (async () => {
        for await (const msg of b.messages({ transport: "ws", ackBatch: { messages: 10, ms: 50 }, ackOnExit: false }))
          if (msg.body === "c") throw new Error("boom");
      })().catch((e: Error) => e);
      t.equal((err as Error).message, "boom");
      t.same(await waiting(), ["c", "d"], "a and b acknowledged by the stop; c (failed) and d stay");

      const got: string[] = [];
      const err2 = await (async () => {
        for await (const msg of b.messages({ timeout: 1, ackOnExit: false })) {
          if (msg.body === "d") throw new Error("boom again");
          got.push(msg.body);
        }
      })().catch((e: Error) => e);
      t.equal((err2 as Error).message, "boom again");
      t.same(got, ["c"], "polling: c comes again and is handled");
      t.same(await waiting(), ["d"], "c acknowledged with its page; d stays");
    },
  );

  t.test("polling: one cumulative ack per thread at the end of a page; direct messages one by one", async (t) => {
    const acks: string[] = [];
    const counting = new Flock({
      baseUrl: node.url,
      token: b.token,
      fetch: (input, init) => {
        const url = String(input);
        if (url.includes("/ack")) acks.push(url.replace(/^.*\/v1\/messages\//, ""));
        return fetch(input, init);
      },
    });
    for (const body of ["p1", "p2", "p3"]) await a.sendGroup(g.id, body);
    const direct = await a.send(bob.id, "direct");
    const ac = new AbortController();
    const got: string[] = [];
    for await (const msg of counting.messages({ timeout: 1, signal: ac.signal })) {
      got.push(msg.body);
      if (got.length === 5) ac.abort();
    }
    t.same(got, ["d", "p1", "p2", "p3", "direct"]);
    t.equal(acks.length, 2, "two acks for five messages");
    t.ok(acks.includes(`${direct.id}/ack`), "the direct message on its own");
    t.ok(
      acks.some((u) => u.endsWith("/ack?through=true")),
      "the group's four in one cumulative ack",
    );
    t.same(await waiting(), [], "everything acknowledged");

    // a page with one group message: a plain ack (nothing earlier to take along)
    acks.length = 0;
    const lone = await a.sendGroup(g.id, "lone");
    const ac2 = new AbortController();
    for await (const msg of counting.messages({ timeout: 1, signal: ac2.signal })) if (msg.body === "lone") ac2.abort();
    t.same(acks, [`${lone.id}/ack`], "one group message held: a plain ack");
    t.same(await waiting(), [], "and it is acknowledged");
  });
});
