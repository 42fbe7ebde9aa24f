// The hub and the streams (runtime/messaging/hub.ts, streams.ts and the parts it is built of) on the stores' in-memory
// twins (test/twins/) and the memory engines, with the node's clock moved by hand: a send reaching a waiting long poll,
// redelivery and its counts, plain acks in any order and cumulative ones, the backoff while acks fail, a poll while
// Postgres is away (the logs past the remembered cursors, then counted on), joining and leaving a group, and messages
// gone past retention. What the same paths do on Postgres is proved by the integration tests (durable-ack,
// cumulative-ack, group-cursors, rebuild-count, retention-messages); the twins are held to Postgres by
// test/stream-store.contract.ts.
import t, { type Test } from "tap";
import { Messaging } from "../../runtime/messaging/hub.ts";
import { LOGS_AFTER_MS } from "../../runtime/messaging/stream-reads.ts";
import { groupStream, inboxStream } from "../../runtime/messaging/stream-id.ts";
import type { PollRead } from "../../runtime/messaging/stream-store.ts";
import { unitCore, type UnitCoreOptions, unitSends } from "../helpers/unit-core.ts";
import { until } from "../helpers/wait.ts";

/** A hub on the twins; principals and groups made in the twin's tables; sends stored and delivered as send.ts does. */
async function world(t: Test, opts: UnitCoreOptions = {}) {
  const u = unitCore(t, opts);
  const hub = new Messaging(u.core, u.stores);
  await hub.start();
  t.teardown(() => hub.close());
  const { agent, group, direct, post } = unitSends(u, hub, 5_000_000);
  /** A long poll that does not wait unless told. */
  const poll = (who: string, timeoutMs = 0, limit = 50) => hub.poll(who, limit, timeoutMs, () => {});
  return { ...u, hub, agent, group, direct, post, poll };
}

/** A poll's answer as [id, delivery count]. */
const got = (r: PollRead) => r.entries.map((e) => [e.id, e.deliveryCount]);

t.test(
  "a send reaches the poll waiting for it; unacknowledged it comes again, counted; acknowledged it is gone",
  async (t) => {
    const w = await world(t);
    const [a, b] = [w.agent("Ann"), w.agent()];
    const waiting = w.poll(b, 10_000);
    await until(() => w.hub.queued().polls === 1, { what: "the poll waiting" });
    const m = await w.direct(a, b, "hi");
    const first = await waiting;
    t.same(got(first), [[m.id, 1]], "woken by the send, counted 1");
    t.same(JSON.parse(first.entries[0]!.payload), {
      id: `msg_${m.id}`,
      thread_id: `thread_${(await w.hub.directThread(a, b))!}`,
      from: { id: a, display_name: "Ann", avatar_url: null },
      to: b,
      body: "hi",
      created_at: new Date(w.clock.ms).toISOString(),
    });
    t.equal(w.hub.queued().polls, 0);
    t.same(got(await w.poll(b)), [[m.id, 2]], "handed out again: 2");
    t.same(got(await w.poll(b)), [[m.id, 3]]);
    t.equal(await w.hub.ack(a, m.raw), false, "not the sender's to acknowledge");
    t.equal(await w.hub.ack(b, m.raw), true);
    t.same(got(await w.poll(b)), [], "gone for good");
    t.equal(await w.hub.ack(b, m.raw), true, "acknowledging again is still done");
  },
);

t.test(
  "acks in any order move the cursor over what they complete; a cumulative one takes its stream's earlier ones",
  async (t) => {
    const w = await world(t);
    const [a, b] = [w.agent(), w.agent()];
    const g = w.group([a, b]);
    const m = [await w.post(a, g), await w.post(a, g), await w.post(a, g), await w.post(a, g)];
    const d = [await w.direct(a, b), await w.direct(a, b)];
    t.same(
      got(await w.poll(b)).map(([id]) => id),
      [...m, ...d].map((x) => x.id),
      "oldest first across the group and the inbox",
    );
    t.equal(await w.hub.ack(b, m[2]!.raw), true, "3 first");
    t.same(
      got(await w.poll(b)).map(([id]) => id),
      [m[0]!.id, m[1]!.id, m[3]!.id, d[0]!.id, d[1]!.id],
    );
    await Promise.all([w.hub.ack(b, m[1]!.raw), w.hub.ack(b, m[0]!.raw)]);
    t.same(
      (await w.stores.streams.backlog([{ member: b, stream: groupStream(g), limit: 9, after: 0 }], 0n))[0]!.cursors.get(
        groupStream(g),
      ),
      { acked: 3, above: [], expired: 0 },
      "1 and 2 completed the run to 3",
    );
    t.same(
      await w.core.engines.streamCursors.read(b, [g]),
      new Map([[g, { acked: 3, above: [] }]]),
      "and the engines remember the cursor, for a poll while Postgres is away",
    );
    t.equal(await w.hub.ack(b, d[1]!.raw, true), true, "through the second direct message");
    t.same(
      got(await w.poll(b)).map(([id]) => id),
      [m[3]!.id],
      "the inbox's earlier one went with it; the group's stays",
    );
    t.equal(await w.hub.ack(a, m[3]!.raw, true), true, "the sender's own: accepted, taking nothing of b's");
    t.same(
      got(await w.poll(b)).map(([id]) => id),
      [m[3]!.id],
    );
  },
);

t.test("while acks fail, a poll hands out again only after a backoff on the node's clock", async (t) => {
  const w = await world(t);
  const [a, b] = [w.agent(), w.agent()];
  const m = await w.direct(a, b);
  w.tables.down();
  await t.rejects(w.hub.ack(b, m.raw), { code: "ECONNREFUSED" }, "an ack Postgres cannot take is not answered as done");
  w.tables.up();
  t.same(got(await w.poll(b)), [[m.id, 1]], "the first poll after a failed ack hands out");
  t.same(got(await w.poll(b)), [], "the next, within the backoff, hands out nothing (and reads nothing)");
  t.equal(w.hub.queued().backoff, 1);
  w.clock.ms += 1000;
  t.same(got(await w.poll(b)), [[m.id, 2]], "past 1 s it does, counted on from what was handed out");
  w.clock.ms += 1000;
  t.same(got(await w.poll(b)), [], "the backoff doubled");
  w.clock.ms += 1000;
  t.same(got(await w.poll(b)), [[m.id, 3]]);
  t.equal(await w.hub.ack(b, m.raw), true);
  t.equal(w.hub.queued().backoff, 0, "an ack that takes ends it");
});

t.test(
  "with Postgres away a poll reads the logs past the remembered cursors, and the count carries on after",
  async (t) => {
    const w = await world(t);
    const [a, b] = [w.agent(), w.agent()];
    const m1 = await w.direct(a, b, "acked");
    t.equal(await w.hub.ack(b, m1.raw), true, "its cursor is remembered");
    const m2 = await w.direct(a, b, "not acked");
    w.tables.down();
    w.core.circuits.postgres.open(new Error("test: Postgres away"));
    const started = performance.now();
    t.same(got(await w.poll(b)), [[m2.id, 2]], "from the log past the cursor: possibly delivered before (2)");
    // (not at once: a cursor copy sent just before the outage may be on its way; the poll waits out the margin)
    t.ok(performance.now() - started >= LOGS_AFTER_MS - 50, "once the circuit had been open for the margin");
    w.tables.up();
    await until(() => !w.core.circuits.postgres.isOpen, { ms: 5000, what: "the circuit's probe to close it" });
    t.same(got(await w.poll(b)), [[m2.id, 2]], "read from Postgres again: what the log handed out counts");
    // (the hand-out from the log is this node's to know: Postgres counted one, so the next read says 2 again)
    t.same(got(await w.poll(b)), [[m2.id, 2]]);
    t.same(got(await w.poll(b)), [[m2.id, 3]]);
  },
);

t.test(
  "an ack is answered once Postgres took it; its cursor copy, failed, is held and sent again, and meanwhile no poll reads the logs past an older one",
  async (t) => {
    const w = await world(t);
    const [a, b] = [w.agent(), w.agent()];
    const m1 = await w.direct(a, b, "acked");
    const cursors = w.core.engines.streamCursors;
    const merge = cursors.merge.bind(cursors);
    let refused = 0;
    cursors.merge = () => {
      refused++;
      return Promise.reject(new Error("test: Redis away"));
    };
    t.equal(await w.hub.ack(b, m1.raw), true, "answered: Postgres took it");
    t.equal(refused, 1, "its copy was sent");
    const copies = w.hub.streams.reads.copies;
    await until(() => copies.heldMembers === 1, { what: "the failed copy held" });
    t.ok(copies.pending(b));
    const m2 = await w.direct(a, b, "not acked");
    w.tables.down();
    w.core.circuits.postgres.open(new Error("test: Postgres away"));
    await until(() => w.core.circuits.postgres.openMs >= LOGS_AFTER_MS, { what: "the margin" });
    await t.rejects(w.poll(b), { code: "unavailable" }, "its copy is held here: not from the logs");
    await until(() => refused >= 3, { what: "the timer sending it again while Postgres is away" });
    const before = refused;
    copies.retry();
    t.equal(refused, before + 1, "sent again (the timer does so every RETRY_MS: it did meanwhile)");
    await until(() => copies.heldMembers === 1, { what: "held again" });
    cursors.merge = merge;
    copies.retry();
    await until(() => !copies.pending(b), { what: "the copy landed" });
    t.same(await cursors.read(b, [0n]), new Map([[0n, { acked: m1.seq, above: [] }]]), "the cursor is remembered");
    t.same(got(await w.poll(b)), [[m2.id, 2]], "from the logs: the acknowledged message is not handed out again");
  },
);

t.test("joining a group brings only what follows; leaving it, nothing more", async (t) => {
  const w = await world(t);
  const [a, x] = [w.agent(), w.agent()];
  const g = w.group([a]);
  await w.post(a, g, "before");
  t.same(got(await w.poll(x)), [], "not a member");
  await w.hub.streams.membersChanged(g, await w.stores.streams.join(g, [x]), []);
  t.same(await w.hub.streams.streamsOf(x), [inboxStream(x), groupStream(g)], "the node knows at once");
  const after = await w.post(a, g, "after");
  t.same(got(await w.poll(x)), [[after.id, 1]], "only what came after joining");
  t.equal(await w.stores.streams.leave(g, x), true);
  await w.hub.streams.membersChanged(g, [], [x]);
  t.same(await w.hub.streams.streamsOf(x), [inboxStream(x)]);
  await w.post(a, g, "gone");
  t.same(got(await w.poll(x)), [], "what was pending went with the cursor");
});

t.test(
  "messages past retention are not handed out; a poll says once how many went unread; their ack is done",
  async (t) => {
    const w = await world(t, { retentionMs: 60_000 });
    const [a, b] = [w.agent(), w.agent()];
    const old = [await w.direct(a, b, "o1"), await w.direct(a, b, "o2")];
    w.clock.ms += 120_000;
    w.tables.expire(w.core.horizons.messages());
    const kept = await w.direct(a, b, "kept");
    const first = await w.poll(b);
    t.same([got(first), first.expired], [[[kept.id, 1]], 2], "the kept one, and the two that went");
    const again = await w.poll(b);
    t.same([got(again), again.expired], [[[kept.id, 2]], 0], "said once");
    w.tables.down();
    t.equal(await w.hub.ack(b, old[0]!.raw), true, "an ack below the horizon is done at once, without Postgres");
    w.tables.up();
  },
);

t.test("a message id taken already is stored under a new one", async (t) => {
  const w = await world(t);
  const [a, b] = [w.agent(), w.agent()];
  const first = await w.direct(a, b);
  const threadId = (await w.hub.directThread(a, b))!;
  const m = { id: first.raw, threadId, sender: a, recipient: b, body: "clash", createdAt: new Date(w.clock.ms) };
  t.equal(await w.hub.storeDirect(m), 2, "numbered next");
  t.not(m.id, first.raw, "under a new id");
  t.equal((await w.stores.sends.committed([m.id])).get(String(m.id)), 2);
});

t.test("a request's ack does not wait behind the sockets' acks: each lane has its own statement", async (t) => {
  const w = await world(t);
  const [a, b, c] = [w.agent(), w.agent(), w.agent()];
  const forSocket = await w.direct(a, b, "to b's socket");
  const forRequest = await w.direct(a, c, "to c's poll");
  const more = [await w.direct(a, b, "2"), await w.direct(a, b, "3")];
  // the sockets' statement is held until the test lets it go
  let release!: () => void;
  const held = new Promise<void>((r) => (release = r));
  let holding = 0;
  const ack = w.stores.streams.ack.bind(w.stores.streams);
  w.stores.streams.ack = async (items) => {
    if (items.some((i) => i.recipient === b)) {
      holding++;
      await held;
    }
    return ack(items);
  };
  const socketAcks = [w.hub.ack(b, forSocket.raw, false, "socket")];
  await until(() => holding === 1, { what: "the sockets' statement running" });
  socketAcks.push(...more.map((m) => w.hub.ack(b, m.raw, false, "socket")));
  await until(() => w.hub.queued().acks === 3, { what: "the sockets' next acks queued behind it" });
  t.equal(await w.hub.ack(c, forRequest.raw), true, "answered while the sockets' statement is held");
  t.equal(w.hub.queued().acks, 3, "the sockets' still wait (one held, two behind it)");
  release();
  t.same(await Promise.all(socketAcks), [true, true, true]);
  t.same(got(await w.poll(b)), [], "each socket ack took its message");
});
