// A committed message whose publish never came (its node died between the commit and the append, or Redis refused the
// append) reaches the live sockets and waiting long polls of every node anyway: each node's position check
// (runtime/messaging/position-check.ts) finds its streams behind Postgres at two checks in a row, fills its sockets'
// channels from Postgres and wakes its waiters. Two nodes on one Postgres schema and one Redis prefix; the checks are
// run by the test (each node's own timer runs too: the test asserts what arrives, not which pass brought it). The
// check's counts, its race with a publish under way and its turns over many streams are proved on the unit tier
// (test/unit/position-check.test.ts).
import t, { type Test } from "tap";
import { inboxStream } from "../runtime/messaging/stream-id.ts";
import type { TestNode } from "./helpers/node.ts";
import { type Registered, registerAgent } from "./helpers/http.ts";
import { startTestNode } from "./helpers/node.ts";
import { Client, pending, sendOk } from "./messaging-helpers.ts";
import { until } from "./helpers/wait.ts";

/** Three checks run by hand: the first may join one that started before the commit, the next two start after it. */
async function checks(node: TestNode): Promise<void> {
  for (let i = 0; i < 3; i++) await node.svc.hub.streams.check.pass();
}

/** A long poll of `who` on `node`, once it waits; `answer` is its answer, `done` whether it came. */
async function waitingPoll(node: TestNode, who: Registered) {
  const before = node.svc.hub.waiters.size;
  const state = { done: false, answer: Promise.resolve([] as any[]) };
  state.answer = pending(node.url, who, "timeout=20").then((ms) => {
    state.done = true;
    return ms;
  });
  await until(() => node.svc.hub.waiters.size > before);
  return state;
}

/** A socket of `who` on `node`, taking its inbox live. */
async function liveSocket(t: Test, node: TestNode, who: Registered) {
  const ws = await Client.open(node.url, { token: who.token });
  t.teardown(() => ws.close());
  await ws.nextOfType("ready");
  await until(() => node.svc.hub.streams.channels.published(inboxStream(who.id)) !== undefined);
  return ws;
}

/** Stored by `node`'s hub, as a send stores it, and never published (its node "died" before the append). */
async function storeOnly(node: TestNode, from: Registered, to: Registered, body: string): Promise<string> {
  const hub = node.svc.hub;
  const m = {
    id: node.svc.ids.nextRaw(),
    threadId: (await hub.directThread(from.id, to.id))!,
    sender: from.id,
    recipient: to.id,
    body,
    createdAt: new Date(),
  };
  t.equal(typeof (await hub.storeDirect(m)), "number", `${body}: committed`);
  return `msg_${m.id}`;
}

t.test("two nodes", async (t) => {
  const one = await startTestNode(t);
  const two = await startTestNode(t, { schema: one.schema, prefix: one.prefix });

  t.test(
    "committed, never published: the other node's socket and waiting poll get it within a few checks",
    async (t) => {
      const a = await registerAgent(one.url, "a");
      const b = await registerAgent(one.url, "b");
      const c = await registerAgent(one.url, "c");
      const ws = await liveSocket(t, two, b);
      // b's socket has had a message: its channel knows the inbox's number
      const first = await sendOk(one.url, a, b.id, "first");
      t.equal((await ws.nextOfType("message")).message.id, first.id);
      await sendOk(one.url, a, c.id, "c's first");
      t.equal((await pending(two.url, c)).length, 1);
      await two.svc.hub.ack(c.id, BigInt((await pending(two.url, c))[0].id.slice(4)));
      const poll = await waitingPoll(two, c);

      const lostB = await storeOnly(one, a, b, "lost to b");
      const lostC = await storeOnly(one, a, c, "lost to c");
      await checks(two);
      t.equal((await ws.nextOfType("message")).message.id, lostB, "the socket gets it");
      t.same(
        (await poll.answer).map((m) => m.id),
        [lostC],
        "the waiting poll is woken and reads it",
      );
      const after = await sendOk(one.url, a, b.id, "after");
      t.equal((await ws.nextOfType("message")).message.id, after.id, "once, and in order: the next frame is the next");
    },
  );

  t.test(
    "a send whose append fails is answered: its own node's socket and poll have it at once, the other's by the check",
    async (t) => {
      const a = await registerAgent(one.url, "a");
      const b = await registerAgent(one.url, "b");
      const c = await registerAgent(one.url, "c");
      const d = await registerAgent(one.url, "d");
      const here = await liveSocket(t, one, b);
      const there = await liveSocket(t, two, b);
      const warm = await sendOk(one.url, a, b.id, "warm");
      t.equal((await here.nextOfType("message")).message.id, warm.id);
      t.equal((await there.nextOfType("message")).message.id, warm.id);
      // inboxes with a number, nothing pending
      for (const who of [c, d]) {
        const w = await sendOk(one.url, a, who.id, "warm");
        await one.svc.hub.ack(who.id, BigInt(w.id.slice(4)));
      }
      const pollHere = await waitingPoll(one, c);
      const pollThere = await waitingPoll(two, d);

      const logs = one.svc.engines.streams;
      const append = logs.append.bind(logs);
      logs.append = () => Promise.reject(new Error("test: the append is refused"));
      t.teardown(() => {
        logs.append = append;
      });
      const toB = await sendOk(one.url, a, b.id, "unpublished to b");
      const toC = await sendOk(one.url, a, c.id, "unpublished to c");
      const toD = await sendOk(one.url, a, d.id, "unpublished to d");
      logs.append = append;
      t.equal((await here.nextOfType("message")).message.id, toB.id, "the sending node's socket: at once");
      t.same(
        (await pollHere.answer).map((m) => m.id),
        [toC.id],
        "the sending node's poll: at once",
      );
      await checks(two);
      t.equal((await there.nextOfType("message")).message.id, toB.id, "the other node's socket: by the check");
      t.same(
        (await pollThere.answer).map((m) => m.id),
        [toD.id],
        "the other node's poll: by the check",
      );
    },
  );

  t.test("the check's own timer brings a message whose publish never came, within seconds", async (t) => {
    const a = await registerAgent(one.url, "a");
    const b = await registerAgent(one.url, "b");
    const ws = await liveSocket(t, two, b);
    const first = await sendOk(one.url, a, b.id, "first");
    t.equal((await ws.nextOfType("message")).message.id, first.id);
    const started = performance.now();
    const lost = await storeOnly(one, a, b, "lost");
    t.equal((await ws.nextOfType("message", 10_000)).message.id, lost);
    const ms = performance.now() - started;
    // two checks of 1 s, and the fill; a bound far below the chaos suite's 10 s, not a speed target
    t.ok(ms < 5000, `delivered ${Math.round(ms)} ms after its commit`);
  });
});
