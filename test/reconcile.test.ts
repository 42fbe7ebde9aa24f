// A message committed by a node that died before publishing it reaches its recipient's waiting long polls and live
// sockets anyway (issue 17, item 3): the dead node's in-flight record is claimed once its lease ends, and the
// messages Postgres committed are published again from Postgres (runtime/messaging/reconcile.ts). Driven by hand: a
// dead node is its in-flight record and an expired lease, its commit is the store's own statement, and the pass is
// run by the test instead of the timer.
import t, { type Test } from "tap";
import { FakeClock } from "./helpers/clock.ts";
import { Reconciler, STALE_MS } from "../runtime/messaging/reconcile.ts";
import { inboxStream } from "../runtime/messaging/stream-id.ts";
import { insertDirectBatch } from "../runtime/messaging/messages-store.ts";
import { LEASE_MS } from "../runtime/node-lease.ts";
import { type Registered, registerAgent } from "./helpers/http.ts";
import { startTestNode, type TestNode } from "./helpers/node.ts";
import { ack, Client, pending, sendOk } from "./messaging-helpers.ts";
import { until } from "./helpers/wait.ts";

/**
 * A node whose clock stands still (its own timer-driven reconciler then never finds anything stale or expired: only a
 * test's passes take in-flight entries), with two agents, a and b, and their direct thread.
 */
async function standingNode(t: Test, engine: "redis" | "memory") {
  const nodeClock = new FakeClock(Date.now());
  const node = await startTestNode(t, { engine, now: nodeClock.now });
  const a = await registerAgent(node.url, "a");
  const b = await registerAgent(node.url, "b");
  t.same(await pending(node.url, b), [], "nothing pending for b");
  const threadId = (await node.svc.hub.directThread(a.id, b.id))!;
  return { node, svc: node.svc, a, b, threadId, nodeClock };
}

/** A long poll of `who` on `node`, once it waits; `answer` is its answer, `done` whether it came. */
async function waitingPoll(node: TestNode, who: Registered) {
  const before = node.svc.hub.waiters.size;
  const state = { done: false, answer: Promise.resolve([] as any[]) };
  state.answer = pending(node.url, who, "timeout=10").then((ms) => {
    state.done = true;
    return ms;
  });
  await until(() => node.svc.hub.waiters.size > before);
  return state;
}

/** A socket of `who` taking its inbox live. */
async function liveSocket(t: Test, node: TestNode, who: Registered) {
  const ws = await Client.open(node.url, { token: who.token });
  t.teardown(() => ws.close());
  await ws.nextOfType("ready");
  await until(() => node.svc.hub.streams.channels.published(inboxStream(who.id)) !== undefined);
  return ws;
}

for (const engine of ["redis", "memory"] as const) {
  t.test(`committed, never published: delivered after the sender's lease ends (${engine})`, async (t) => {
    const { node, svc, a, b, threadId, nodeClock } = await standingNode(t, engine);
    const ws = await liveSocket(t, node, b);
    // one acknowledged meanwhile: published again, it must not come back
    const acked = await sendOk(node.url, a, b.id, "acked");
    t.equal((await ws.nextOfType("message")).message.id, acked.id);
    t.equal((await ack(node.url, b, acked.id)).status, 204);
    const poll = await waitingPoll(node, b);

    // a node that recorded two sends in flight (and the acknowledged one), committed them, and died before publishing
    const dead = `dead${Date.now()}`;
    const diedAt = nodeClock.now();
    await svc.engines.nodes.acquire(dead, diedAt, LEASE_MS);
    const sent = [svc.ids.nextRaw(), svc.ids.nextRaw()];
    await svc.engines.inflight.add(dead, [...sent.map(String), acked.id.slice(4)], diedAt);
    const rows = sent.map((id, i) => ({
      id,
      threadId,
      sender: a.id,
      recipient: b.id,
      body: `lost ${i}`,
      createdAt: new Date(),
    }));
    t.same(await insertDirectBatch(svc.sql, rows), [2, 3], "numbered 2 and 3 in b's inbox");

    const reconciler = new Reconciler(svc, node.lease.owner, () => clock);
    let clock = diedAt + LEASE_MS - 1;
    t.equal(await reconciler.pass(), 0, "the dead node's lease has not ended: nothing taken");
    t.notOk(poll.done, "stuck: committed, but the waiting long poll was never woken");
    clock = diedAt + LEASE_MS + 1;
    t.equal(await reconciler.pass(), 3, "lease ended: claimed, and the three committed published again");
    t.ok(clock - diedAt <= LEASE_MS + STALE_MS + 1000, "within 10 s of the commit (the pass runs every second)");
    t.same(
      (await poll.answer).map((m) => m.body),
      ["lost 0", "lost 1"],
      "the long poll is woken with both, once each",
    );
    await sendOk(node.url, a, b.id, "after");
    const frames = [];
    for (let i = 0; i < 3; i++) frames.push((await ws.nextOfType("message")).message.body);
    t.same(frames, ["lost 0", "lost 1", "after"], "the socket gets both, in order, and not the acknowledged one again");
    t.equal(await reconciler.pass(), 0, "done: nothing left in flight");
    t.same(await svc.engines.inflight.stale(node.lease.owner, clock + 1), [], "the record is empty");
  });

  t.test(`a node's own send whose publish failed is finished by its own pass (${engine})`, async (t) => {
    const { node, svc, a, b, threadId, nodeClock } = await standingNode(t, engine);
    const poll = await waitingPoll(node, b);
    const id = svc.ids.nextRaw();
    const at = nodeClock.now();
    await svc.engines.inflight.add(node.lease.owner, [String(id)], at);
    t.same(
      await insertDirectBatch(svc.sql, [
        { id, threadId, sender: a.id, recipient: b.id, body: "x", createdAt: new Date() },
      ]),
      [1],
    );
    const reconciler = new Reconciler(svc, node.lease.owner, () => clock);
    let clock = at + STALE_MS - 1;
    t.equal(await reconciler.pass(), 0, "young: its publish may still be under way");
    t.notOk(poll.done, "not published yet");
    clock = at + STALE_MS + 1;
    t.equal(await reconciler.pass(), 1);
    t.same(
      (await poll.answer).map((m) => m.body),
      ["x"],
      "published: the long poll is woken",
    );
  });

  t.test(`a pass over many messages publishes every one to a live socket, once, in order (${engine})`, async (t) => {
    const { node, svc, a, b, threadId, nodeClock } = await standingNode(t, engine);
    const ws = await liveSocket(t, node, b);
    const n = 150;
    const rows = Array.from({ length: n }, (_, i) => ({
      id: svc.ids.nextRaw(),
      threadId,
      sender: a.id,
      recipient: b.id,
      body: `m${i}`,
      createdAt: new Date(),
    }));
    const at = nodeClock.now();
    await svc.engines.inflight.add(
      node.lease.owner,
      rows.map((r) => String(r.id)),
      at,
    );
    t.same(
      await insertDirectBatch(svc.sql, rows),
      rows.map((_, i) => i + 1),
    );
    const reconciler = new Reconciler(svc, node.lease.owner, () => at + STALE_MS + 1);
    t.equal(await reconciler.pass(), n);
    const got = [];
    for (let i = 0; i < n; i++) got.push((await ws.nextOfType("message")).message.id);
    t.same(
      got,
      rows.map((r) => `msg_${r.id}`),
      "every one on the socket, in order",
    );
    const next = await sendOk(node.url, a, b.id, "next");
    t.equal((await ws.nextOfType("message")).message.id, next.id, "once: the next frame is the next message");
    t.equal((await pending(node.url, b, "timeout=0&limit=100")).length, 100, "and pending from Postgres");
    t.equal(await reconciler.pass(), 0, "nothing left in flight");
  });
}
