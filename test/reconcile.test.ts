// A message committed by a node that died before its mailbox append is delivered anyway (issue 17, item 3): the
// dead node's in-flight record is claimed once its lease ends, and the append finished. Driven by hand: a dead
// node is its in-flight record and an expired lease, its commit is the store's own statement, and the pass is run
// by the test instead of the timer.
import t, { type Test } from "tap";
import { APPEND_PART } from "../runtime/engines/mailbox.ts";
import { FakeClock } from "./helpers/clock.ts";
import { Reconciler, STALE_MS } from "../runtime/messaging/reconcile.ts";
import { insertDirectBatch } from "../runtime/messaging/store.ts";
import { LEASE_MS } from "../runtime/node-lease.ts";
import { registerAgent } from "./helpers/http.ts";
import { startTestNode } from "./helpers/node.ts";
import { ack, pending, sendOk } from "./messaging-helpers.ts";

/**
 * A node whose clock stands still (its own timer-driven reconciler then never finds anything stale: only a test's
 * passes take in-flight entries), with two agents, a and b, b's mailbox built, and their direct thread.
 */
async function standingNode(t: Test, engine: "redis" | "memory") {
  const nodeClock = new FakeClock(Date.now());
  const node = await startTestNode(t, { engine, now: nodeClock.now });
  const a = await registerAgent(node.url, "a");
  const b = await registerAgent(node.url, "b");
  t.same(await pending(node.url, b), [], "b's mailbox is built (complete)");
  const threadId = (await node.svc.hub.directThread(a.id, b.id))!;
  return { node, svc: node.svc, a, b, threadId, nodeClock };
}

for (const engine of ["redis", "memory"] as const) {
  t.test(`committed, never appended: delivered after the sender's lease ends (${engine})`, async (t) => {
    const node = await startTestNode(t, { engine });
    const { svc } = node;
    const a = await registerAgent(node.url, "a");
    const b = await registerAgent(node.url, "b");
    t.same(await pending(node.url, b), [], "b's mailbox is built (complete)");
    const threadId = (await svc.hub.directThread(a.id, b.id))!;

    // a node that recorded two sends in flight, committed them, and died before appending
    const dead = `dead${Date.now()}`;
    const diedAt = Date.now();
    await svc.engines.nodes.acquire(dead, diedAt, LEASE_MS);
    const sent = [svc.ids.nextRaw(), svc.ids.nextRaw()];
    await svc.engines.inflight.add(dead, sent.map(String), diedAt);
    const rows = sent.map((id, i) => ({ id, threadId, sender: a.id, recipient: b.id, body: `lost ${i}`, createdAt: new Date() }));
    t.same(await insertDirectBatch(svc.sql, rows), [true, true]);
    // and one acknowledged meanwhile (delivered by a rebuild elsewhere): it must not come back
    const acked = await sendOk(node.url, a, b.id, "acked");
    await svc.engines.inflight.add(dead, [acked.id.slice(4)], diedAt);
    t.equal((await pending(node.url, b)).length, 1);
    t.equal((await ack(node.url, b, acked.id)).status, 204);

    t.same(await pending(node.url, b), [], "stuck: committed, but the complete mailbox never got them");
    const reconciler = new Reconciler(svc, node.lease.owner, () => clock);
    let clock = diedAt + LEASE_MS - 1;
    t.equal(await reconciler.pass(), 0, "the dead node's lease has not ended: nothing taken");
    clock = diedAt + LEASE_MS + 1;
    t.equal(await reconciler.pass(), 2, "lease ended: claimed, and both made sure of");
    t.ok(clock - diedAt <= LEASE_MS + STALE_MS + 1000, "within 10 s of the commit (the pass runs every second)");
    t.same((await pending(node.url, b)).map((m) => m.body), ["lost 0", "lost 1"], "delivered, once each");
    t.equal(await reconciler.pass(), 0, "done: nothing left in flight");
    t.same(await svc.engines.inflight.stale(node.lease.owner, clock + 1), [], "the record is empty");
  });

  t.test(`a node's own send whose append failed is finished by its own pass (${engine})`, async (t) => {
    const { node, svc, a, b, threadId, nodeClock } = await standingNode(t, engine);
    const id = svc.ids.nextRaw();
    const at = nodeClock.now();
    await svc.engines.inflight.add(node.lease.owner, [String(id)], at);
    await insertDirectBatch(svc.sql, [{ id, threadId, sender: a.id, recipient: b.id, body: "x", createdAt: new Date() }]);
    const reconciler = new Reconciler(svc, node.lease.owner, () => clock);
    let clock = at + STALE_MS - 1;
    t.equal(await reconciler.pass(), 0, "young: its append may still be under way");
    clock = at + STALE_MS + 1;
    t.equal(await reconciler.pass(), 1);
    t.same((await pending(node.url, b)).map((m) => m.body), ["x"]);
  });

  t.test(`a pass over more items than one append part appends in parts (${engine})`, async (t) => {
    const { node, svc, a, b, threadId, nodeClock } = await standingNode(t, engine);
    const n = APPEND_PART + 2;
    const rows = Array.from({ length: n }, (_, i) => ({ id: svc.ids.nextRaw(), threadId, sender: a.id, recipient: b.id, body: `m${i}`, createdAt: new Date() }));
    const at = nodeClock.now();
    await svc.engines.inflight.add(node.lease.owner, rows.map((r) => String(r.id)), at);
    t.same(await insertDirectBatch(svc.sql, rows), rows.map(() => true));
    const mb = svc.engines.mailboxes;
    const append = mb.append.bind(mb);
    const parts: number[] = [];
    mb.append = (items) => {
      parts.push(items.length);
      return append(items);
    };
    t.teardown(() => {
      mb.append = append;
    });
    const reconciler = new Reconciler(svc, node.lease.owner, () => at + STALE_MS + 1);
    t.equal(await reconciler.pass(), n);
    t.same(parts, [APPEND_PART, 2], "in parts of APPEND_PART");
    const held = await mb.fetch(b.id, n + 1, null);
    t.same(held?.map((e) => e.id), rows.map((r) => String(r.id)), "every one in the mailbox, once, in order");
  });
}
