// The position check (runtime/messaging/position-check.ts) on the stores' in-memory twins, each pass run by hand: a stream
// behind Postgres at two checks in a row is caught up (its socket channel filled, its waiters woken), one behind at a
// single check is not (a publish under way gets a check's interval to arrive), nothing is read while Postgres's
// circuit is open, and a node with more streams than a statement reads takes them in turn.
import t, { type Test } from "tap";
import { Messaging } from "../../runtime/messaging/hub.ts";
import { CHECK_MAX } from "../../runtime/messaging/position-check.ts";
import { inboxStream, type StreamId } from "../../runtime/messaging/stream-id.ts";
import type { ChannelReader } from "../../runtime/messaging/channels.ts";
import { jsonCodec } from "../../runtime/ws/codec.ts";
import { unitCore, unitSends } from "../helpers/unit-core.ts";
import { until } from "../helpers/wait.ts";

async function world(t: Test) {
  const u = unitCore(t);
  const hub = new Messaging(u.core, u.stores);
  await hub.start();
  t.teardown(() => hub.close());
  const sends = unitSends(u, hub, 6_000_000);
  /** Stored as a send stores it, never delivered (its node died before the append). */
  const storeOnly = async (from: string, to: string, body = "lost") => {
    const threadId = (await hub.directThread(from, to))!;
    const m = { id: u.core.ids.nextRaw(), threadId, sender: from, recipient: to, body, createdAt: new Date() };
    t.equal(typeof (await hub.storeDirect(m)), "number");
    return String(m.id);
  };
  /** A long poll waiting on `who`'s streams: `done` once answered, `ids` what it got. */
  const waiting = async (who: string) => {
    const before = hub.waiters.size;
    const state = { done: false, ids: [] as string[] };
    void hub
      .poll(who, 50, 30_000, () => {})
      .then((r) => {
        state.done = true;
        state.ids = r.entries.map((e) => e.id);
      });
    await until(() => hub.waiters.size > before, { what: "the poll waiting" });
    return state;
  };
  return { ...u, ...sends, hub, check: hub.streams.check, storeOnly, waiting };
}

/** A socket's stand-in taking `stream` live on the hub's channels: the frames published to its topic. */
function liveReader(hub: Messaging, stream: StreamId, upTo: number) {
  const frames: string[] = [];
  const codec = jsonCodec;
  const reader: ChannelReader = { codec, subscribe() {}, unsubscribe() {}, write: () => true };
  hub.streams.channels.attach({
    publish(topic, data) {
      if (topic.startsWith(`${stream}:`))
        frames.push(JSON.parse(Buffer.from(data as Uint8Array).toString()).message.id);
    },
  });
  hub.streams.channels.warm(stream);
  hub.streams.channels.join(stream, reader, upTo);
  return frames;
}

t.test("a waiting poll: behind at two checks in a row, it is woken and reads the message", async (t) => {
  const w = await world(t);
  const [a, b] = [w.agent(), w.agent()];
  const poll = await w.waiting(b);
  const id = await w.storeOnly(a, b);
  t.equal(await w.check.pass(), 0, "behind once: a publish may be on its way");
  t.notOk(poll.done);
  t.equal(await w.check.pass(), 1, "behind again: its publish never came");
  await until(() => poll.done, { what: "the poll answered" });
  t.same(poll.ids, [id], "woken, it read the message");
  t.equal(await w.check.pass(), 0, "nothing waits now");
});

t.test("a live socket's channel: filled from the store, in order, once", async (t) => {
  const w = await world(t);
  const [a, b] = [w.agent(), w.agent()];
  const first = await w.direct(a, b, "first");
  const frames = liveReader(w.hub, inboxStream(b), first.seq);
  const lost = [await w.storeOnly(a, b, "lost 1"), await w.storeOnly(a, b, "lost 2")];
  t.equal(await w.check.pass(), 0);
  t.same(frames, [], "nothing yet");
  t.equal(await w.check.pass(), 1);
  t.same(
    frames,
    lost.map((id) => `msg_${id}`),
    "both, in order",
  );
  const next = await w.direct(a, b, "next");
  t.same(
    frames,
    [...lost, next.id].map((id) => `msg_${id}`),
    "the next one follows, nothing again",
  );
  t.equal(await w.check.pass(), 0, "caught up");
  t.equal(await w.check.pass(), 0);
});

t.test("a publish that arrives between two checks is not raced", async (t) => {
  const w = await world(t);
  const [a, b] = [w.agent(), w.agent()];
  const first = await w.direct(a, b, "first");
  const frames = liveReader(w.hub, inboxStream(b), first.seq);
  const reads = w.stores.streams.after.bind(w.stores.streams);
  let filled = 0;
  w.stores.streams.after = (...args) => {
    filled++;
    return reads(...args);
  };
  // committed; its publish comes after a check saw the stream behind (the time its node takes to append)
  const threadId = (await w.hub.directThread(a, b))!;
  const m = { id: w.core.ids.nextRaw(), threadId, sender: a, recipient: b, body: "late", createdAt: new Date() };
  const seq = (await w.hub.storeDirect(m))!;
  t.equal(await w.check.pass(), 0, "behind once");
  await w.hub.deliver({ key: inboxStream(b), seq, id: String(m.id), payload: JSON.stringify({ id: `msg_${m.id}` }) });
  t.equal(await w.check.pass(), 0, "the publish came: nothing to catch up");
  t.equal(filled, 0, "and nothing read from the store");
  t.same(frames, [`msg_${m.id}`]);
});

t.test("nothing is read while Postgres's circuit is open; the pass after it closes finds the stream", async (t) => {
  const w = await world(t);
  const [a, b] = [w.agent(), w.agent()];
  const poll = await w.waiting(b);
  const heads = w.stores.streams.heads.bind(w.stores.streams);
  let statements = 0;
  w.stores.streams.heads = (streams) => {
    statements++;
    return heads(streams);
  };
  await w.storeOnly(a, b);
  w.core.circuits.postgres.open(new Error("test: Postgres away"));
  t.equal(await w.check.pass(), 0);
  t.equal(statements, 0, "no statement while the circuit is open");
  await until(() => !w.core.circuits.postgres.isOpen, { ms: 5000, what: "the circuit's probe to close it" });
  t.equal(await w.check.pass(), 0);
  t.equal(await w.check.pass(), 1);
  t.equal(statements, 2, "one statement a pass");
  await until(() => poll.done, { what: "the poll answered" });
});

t.test(`a node waiting on more than ${CHECK_MAX} streams reads at most that many a statement, in turn`, async (t) => {
  const w = await world(t);
  const a = w.agent();
  const who = Array.from({ length: CHECK_MAX + 1 }, () => w.agent());
  // each has an inbox with a number (one message, acknowledged), and a waiter; the last one's stream is the last taken
  let acked = 0;
  for (const b of who) if (await w.hub.ack(b, (await w.direct(a, b)).raw)) acked++;
  t.equal(acked, who.length);
  const stops = who.map((b) => w.hub.waiters.add(inboxStream(b), () => {}));
  t.teardown(() => stops.forEach((s) => s()));
  // the waiters' baselines: each stream is first seen by a check
  t.equal(await w.check.pass(), 0);
  t.equal(await w.check.pass(), 0);
  const heads = w.stores.streams.heads.bind(w.stores.streams);
  const sizes: number[] = [];
  w.stores.streams.heads = (streams) => {
    sizes.push(streams.length);
    return heads(streams);
  };
  const last = who[who.length - 1]!;
  let woken = 0;
  stops.push(w.hub.waiters.add(inboxStream(last), () => woken++));
  await w.storeOnly(a, last);
  let passes = 0;
  while (woken === 0 && passes < 10) {
    await w.check.pass();
    passes++;
  }
  t.equal(woken, 1, "the last stream's waiter is woken");
  t.ok(passes <= 4, `within two turns over the streams (${passes} passes)`);
  t.ok(
    sizes.every((n) => n === CHECK_MAX),
    `each statement reads ${CHECK_MAX} streams (${[...new Set(sizes)].join(", ")})`,
  );
});
