// Channels (runtime/messaging/channels.ts) on its own, with a fake publisher and fake sockets: a node publishes a
// stream's messages (an inbox's or a group's) in the order of their numbers whatever order they arrive in, and a
// socket that caught up to a number receives everything after it exactly once, however far the node had got.
import t from "tap";
import { Channels, type ChannelReader, RecentFrames, topicOf } from "../../runtime/messaging/channels.ts";
import { groupStream, inboxStream, type StreamId } from "../../runtime/messaging/stream-id.ts";
import type { Published } from "../../runtime/messaging/stream-store.ts";
import type { Encoded } from "../../runtime/ws/codec.ts";
import { jsonCodec } from "../../runtime/ws/codec.ts";

/** A group's stream, and an inbox's (its principal's id). */
const G = groupStream(42n);
const INBOX_KEY = inboxStream("4242");
const msgOf = (key: StreamId, seq: number): Published => ({
  key,
  seq,
  id: String(1000 + seq),
  payload: `{"id":"msg_${1000 + seq}"}`,
});
const msg = (seq: number) => msgOf(G, seq);

/** A world of fake sockets: what each received, by publish or by its own write. */
function world(stored: Published[] = []) {
  const subscribed = new Map<string, Set<Fake>>();
  class Fake implements ChannelReader {
    readonly codec = jsonCodec;
    readonly got: number[] = [];
    subscribe(topic: string) {
      if (!subscribed.has(topic)) subscribed.set(topic, new Set());
      subscribed.get(topic)!.add(this);
    }
    unsubscribe(topic: string) {
      subscribed.get(topic)?.delete(this);
    }
    write(frame: Encoded) {
      this.got.push(seqOf(frame.data));
      return true;
    }
  }
  const seqOf = (data: Uint8Array | string) => Number(/msg_(\d+)/.exec(Buffer.from(data).toString())![1]) - 1000;
  const reads: [StreamId, number][] = [];
  const channels = new Channels(
    new RecentFrames(),
    async (key, after, limit) => {
      reads.push([key, after]);
      return stored.filter((m) => m.key === key && m.seq > after).slice(0, limit);
    },
    (err) => {
      throw err;
    },
  );
  let published = 0;
  channels.attach({
    publish(topic, data) {
      published++;
      for (const r of subscribed.get(topic) ?? []) r.got.push(seqOf(data));
    },
  });
  t.teardown(() => channels.close());
  return { channels, reader: () => new Fake(), reads, publishes: () => published };
}

t.test("messages arriving out of order are published in order, once, one publish each", async (t) => {
  const w = world();
  const r = w.reader();
  w.channels.warm(G);
  t.ok(w.channels.join(G, r, 0));
  w.channels.offer(msg(2));
  w.channels.offer(msg(3));
  t.same(r.got, [], "2 and 3 wait for 1");
  w.channels.offer(msg(1));
  w.channels.offer(msg(2)); // again (its own node's and pub/sub's)
  t.same(r.got, [1, 2, 3]);
  t.equal(w.publishes(), 3);
  t.equal(w.channels.published(G), 3);
  const two = [w.reader(), w.reader()];
  for (const x of two) {
    w.channels.warm(G);
    t.ok(w.channels.join(G, x, 3));
  }
  w.channels.offer(msg(4));
  t.equal(w.publishes(), 4, "one publish for all three sockets");
  t.same([r.got.at(-1), two[0]!.got, two[1]!.got], [4, [4], [4]]);
});

t.test(
  "a socket joining behind the node gets the rest from the recent messages; too far behind, it reads again",
  async (t) => {
    const w = world();
    const first = w.reader();
    w.channels.warm(G);
    w.channels.join(G, first, 0);
    for (let s = 1; s <= 300; s++) w.channels.offer(msg(s));
    const near = w.reader();
    w.channels.warm(G);
    t.ok(w.channels.join(G, near, 290), "caught up to 290 while the node is at 300");
    w.channels.offer(msg(301));
    t.same(near.got, [291, 292, 293, 294, 295, 296, 297, 298, 299, 300, 301], "291-300 written to it alone, then live");
    const far = w.reader();
    w.channels.warm(G);
    t.notOk(w.channels.join(G, far, 10), "the recent messages do not reach back to 11");
    t.same(far.got, []);
    t.ok(w.channels.join(G, far, 100), "after reading on to 100");
    t.same(
      far.got,
      Array.from({ length: 201 }, (_, i) => 101 + i),
    );
  },
);

t.test("a socket that caught up further than the node joins when the node gets there", async (t) => {
  const w = world();
  const r = w.reader();
  w.channels.warm(G);
  w.channels.join(G, r, 5);
  const ahead = w.reader();
  w.channels.warm(G);
  t.ok(w.channels.join(G, ahead, 7));
  w.channels.offer(msg(6));
  w.channels.offer(msg(7));
  w.channels.offer(msg(8));
  t.same(r.got, [6, 7, 8]);
  t.same(ahead.got, [8], "nothing it had, nothing missed");
});

t.test("what comes while the first socket catches up is kept; a gap is filled from the store", async (t) => {
  const stored = [1, 2, 3, 4, 5].map(msg);
  const w = world(stored);
  const r = w.reader();
  w.channels.warm(G);
  w.channels.offer(msg(4)); // committed while the socket read its backlog (up to 2)
  w.channels.offer(msg(5));
  t.ok(w.channels.join(G, r, 2));
  t.same(r.got, [], "3 never came: 4 and 5 wait");
  await w.channels.fillGaps();
  t.same(w.reads, [[G, 2]], "read from the store past 2");
  t.same(r.got, [3, 4, 5]);
  t.equal(w.channels.leave(G, r), 5, "leaving tells the last number published to it");
  t.equal(w.channels.size, 0, "a group with no socket left is dropped");
  w.channels.offer(msg(6));
  t.equal(w.publishes(), 3, "and nothing is published for it");
  t.equal(topicOf(G, jsonCodec), "g:42:json");
});

t.test("an inbox and a group are separate streams: each its own numbers, topic and gap reads", async (t) => {
  const stored = [msgOf(INBOX_KEY, 1), msgOf(INBOX_KEY, 2), msgOf(INBOX_KEY, 3), msgOf(G, 1), msgOf(G, 2)];
  const w = world(stored);
  const inbox = w.reader();
  const group = w.reader();
  w.channels.warm(INBOX_KEY);
  t.ok(w.channels.join(INBOX_KEY, inbox, 0));
  w.channels.warm(G);
  t.ok(w.channels.join(G, group, 0));
  w.channels.offer(msgOf(INBOX_KEY, 1));
  w.channels.offer(msgOf(G, 2)); // the group's 1 has not come yet
  w.channels.offer(msgOf(INBOX_KEY, 3)); // nor the inbox's 2
  t.same(
    [inbox.got, group.got],
    [[1], []],
    "numbered apart: the inbox's 1 goes out; each stream's later number waits for its own gap",
  );
  t.same([w.channels.published(INBOX_KEY), w.channels.published(G)], [1, 0]);
  await w.channels.fillGaps();
  t.same(
    new Set(w.reads.map((r) => r.join(" "))),
    new Set([`${G} 0`, `${INBOX_KEY} 1`]),
    "each gap read from its own stream, past its own number",
  );
  t.same(
    [inbox.got, group.got],
    [
      [1, 2, 3],
      [1, 2],
    ],
  );
  t.equal(topicOf(INBOX_KEY, jsonCodec), "4242:json", "an inbox's topic is its principal's");
  t.equal(w.channels.leave(INBOX_KEY, inbox), 3);
  w.channels.offer(msgOf(G, 3));
  t.same(
    [inbox.got, group.got],
    [
      [1, 2, 3],
      [1, 2, 3],
    ],
    "leaving the inbox leaves the group as it was",
  );
  t.equal(w.channels.size, 1);
});
