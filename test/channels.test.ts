// GroupChannels (runtime/messaging/group-channels.ts) on its own, with a fake publisher and fake sockets: a node
// publishes a group's messages in the order of their numbers whatever order they arrive in, and a socket that
// caught up to a number receives everything after it exactly once, however far the node had got.
import t from "tap";
import { GroupChannels, type GroupMessage, type GroupReader, topicOf } from "../runtime/messaging/group-channels.ts";
import { RecentFrames } from "../runtime/messaging/handout.ts";
import type { Encoded } from "../runtime/ws/codec.ts";
import { jsonCodec } from "../runtime/ws/codec.ts";

const G = 42n;
const msg = (seq: number): GroupMessage => ({ seq, id: String(1000 + seq), payload: `{"id":"msg_${1000 + seq}"}` });

/** A world of fake sockets: what each received, by publish or by its own write. */
function world(stored: GroupMessage[] = []) {
  const subscribed = new Map<string, Set<Fake>>();
  class Fake implements GroupReader {
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
  const reads: number[] = [];
  const channels = new GroupChannels(
    new RecentFrames(),
    async (_thread, after, limit) => {
      reads.push(after);
      return stored.filter((m) => m.seq > after).slice(0, limit);
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
  w.channels.offer(G, msg(2));
  w.channels.offer(G, msg(3));
  t.same(r.got, [], "2 and 3 wait for 1");
  w.channels.offer(G, msg(1));
  w.channels.offer(G, msg(2)); // again (its own node's and pub/sub's)
  t.same(r.got, [1, 2, 3]);
  t.equal(w.publishes(), 3);
  t.equal(w.channels.published(G), 3);
  const two = [w.reader(), w.reader()];
  for (const x of two) {
    w.channels.warm(G);
    t.ok(w.channels.join(G, x, 3));
  }
  w.channels.offer(G, msg(4));
  t.equal(w.publishes(), 4, "one publish for all three sockets");
  t.same([r.got.at(-1), two[0]!.got, two[1]!.got], [4, [4], [4]]);
});

t.test("a socket joining behind the node gets the rest from the recent messages; too far behind, it reads again", async (t) => {
  const w = world();
  const first = w.reader();
  w.channels.warm(G);
  w.channels.join(G, first, 0);
  for (let s = 1; s <= 300; s++) w.channels.offer(G, msg(s));
  const near = w.reader();
  w.channels.warm(G);
  t.ok(w.channels.join(G, near, 290), "caught up to 290 while the node is at 300");
  w.channels.offer(G, msg(301));
  t.same(near.got, [291, 292, 293, 294, 295, 296, 297, 298, 299, 300, 301], "291-300 written to it alone, then live");
  const far = w.reader();
  w.channels.warm(G);
  t.notOk(w.channels.join(G, far, 10), "the recent messages do not reach back to 11");
  t.same(far.got, []);
  t.ok(w.channels.join(G, far, 100), "after reading on to 100");
  t.same(far.got, Array.from({ length: 201 }, (_, i) => 101 + i));
});

t.test("a socket that caught up further than the node joins when the node gets there", async (t) => {
  const w = world();
  const r = w.reader();
  w.channels.warm(G);
  w.channels.join(G, r, 5);
  const ahead = w.reader();
  w.channels.warm(G);
  t.ok(w.channels.join(G, ahead, 7));
  w.channels.offer(G, msg(6));
  w.channels.offer(G, msg(7));
  w.channels.offer(G, msg(8));
  t.same(r.got, [6, 7, 8]);
  t.same(ahead.got, [8], "nothing it had, nothing missed");
});

t.test("what comes while the first socket catches up is kept; a gap is filled from the store", async (t) => {
  const stored = [1, 2, 3, 4, 5].map(msg);
  const w = world(stored);
  const r = w.reader();
  w.channels.warm(G);
  w.channels.offer(G, msg(4)); // committed while the socket read its backlog (up to 2)
  w.channels.offer(G, msg(5));
  t.ok(w.channels.join(G, r, 2));
  t.same(r.got, [], "3 never came: 4 and 5 wait");
  await w.channels.fillGaps();
  t.same(w.reads, [2], "read from the store past 2");
  t.same(r.got, [3, 4, 5]);
  t.equal(w.channels.leave(G, r), 5, "leaving tells the last number published to it");
  t.equal(w.channels.size, 0, "a group with no socket left is dropped");
  w.channels.offer(G, msg(6));
  t.equal(w.publishes(), 3, "and nothing is published for it");
  t.equal(topicOf(G, jsonCodec), "g:42:json");
});
