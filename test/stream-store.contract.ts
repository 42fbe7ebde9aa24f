// The messaging core's stores' contract (runtime/messaging/core-stores.ts): what Postgres does
// (test/stream-store-postgres.test.ts) and what the in-memory twin must do as well (test/unit/stream-store-memory.test.ts).
// Its cases are what the integration tests prove end to end (durable-ack, cumulative-ack, group-cursors, flush,
// rebuild-count, messages): numbering without gaps, reads past cursors with their delivery counts, plain acks in any
// order and cumulative ones, who may acknowledge what (joined_seq), the marks of sockets taking a stream live, joining
// and leaving, and retention's horizon.
import type { Test } from "tap";
import type { CoreStores } from "../runtime/messaging/core-stores.ts";
import { firstIdAt, IdGenerator } from "../runtime/ids.ts";
import { IdClash } from "../runtime/messaging/messages-store.ts";
import type { Backlog } from "../runtime/messaging/stream-store.ts";
import { groupStream, inboxStream, type StreamId } from "../runtime/messaging/stream-id.ts";

export interface StoreFixture {
  stores: CoreStores;
  /** A principal, as registering makes one (a person takes messages from friends only unless told). */
  principal(id: string, opts?: { name?: string; acceptsFrom?: "anyone" | "friends" }): Promise<void>;
  befriend(a: string, b: string): Promise<void>;
  /** A new group with its members, the first its owner, each with a cursor at its start (as creating one does). */
  group(id: bigint, members: string[]): Promise<void>;
  /** Retention's pass over the cursors behind messages made before `horizon` (runtime/retention/). */
  expire(horizon: bigint): Promise<void>;
  close(): Promise<void>;
}

export type StoreFactory = () => Promise<StoreFixture>;

export function streamStoreContract(t: Test, make: StoreFactory): void {
  let fx: StoreFixture;
  t.before(async () => {
    fx = await make();
  });
  t.teardown(() => fx.close());
  // ids at a time the suite sets, so that retention's horizon falls between two messages
  const clock = { ms: 1_800_000_000_000 };
  const ids = new IdGenerator(7, () => clock.ms);
  let n = 0;
  const st = () => fx.stores.streams;
  const sends = () => fx.stores.sends;
  const agent = async (name = "agent") => {
    const id = String(71_000_000 + process.pid * 1000 + ++n);
    await fx.principal(id, { name });
    return id;
  };
  const person = async (acceptsFrom: "anyone" | "friends") => {
    const id = `P${72_000_000 + process.pid * 1000 + ++n}`;
    await fx.principal(id, { acceptsFrom });
    return id;
  };
  const group = async (members: string[]) => {
    const id = ids.nextRaw();
    await fx.group(id, members);
    return id;
  };
  const message = (sender: string, threadId: bigint, body: string) => ({
    id: ids.nextRaw(),
    threadId,
    sender,
    body,
    createdAt: new Date(clock.ms),
  });
  /** A direct message stored; its id and number. */
  const direct = async (from: string, to: string, body = "d") => {
    const thread = await sends().directThread(from, to, ids.nextRaw());
    if (thread === null) throw new Error(`${to} takes no messages from ${from}`);
    const m = { ...message(from, thread, body), recipient: to };
    const [seq] = await sends().storeDirect([m]);
    if (typeof seq !== "number") throw new Error(`not stored: ${String(seq)}`);
    return { id: String(m.id), raw: m.id, seq, thread };
  };
  const post = async (from: string, g: bigint, body = "g") => {
    const m = message(from, g, body);
    const [seq] = await sends().storeGroup([m]);
    if (typeof seq !== "number") throw new Error(`not stored: ${String(seq)}`);
    return { id: String(m.id), raw: m.id, seq };
  };
  const read = async (member: string, stream: StreamId | null = null, limit = 50, after = 0, horizon = 0n) =>
    (await st().backlog([{ member, stream, limit, after }], horizon))[0]!;
  /** A read's entries as [id, delivery count]. */
  const got = (b: Backlog) => b.entries.map((e) => [e.id, e.deliveryCount]);
  const pending = async (member: string) => (await read(member)).entries.map((e) => e.id);
  const ack = async (member: string, raw: bigint, through = false) =>
    (await st().ack([{ recipient: member, id: raw, through }]))[0];

  t.test("direct messages are numbered in their recipient's inbox, from any sender, without gaps", async (t) => {
    const [a, c, b] = [await agent(), await agent(), await agent()];
    const m1 = await direct(a, b);
    const m2 = await direct(c, b);
    const m3 = await direct(a, b);
    t.same([m1.seq, m2.seq, m3.seq], [1, 2, 3], "one sequence for the inbox, whichever thread");
    t.not(m1.thread, m2.thread, "two direct threads");
    t.equal((await direct(b, a)).seq, 1, "a's inbox has its own numbers");
    // a batch: numbered in its order; an id already taken is refused before it takes a number; a recipient gone is null
    const thread = m1.thread;
    const taken = { ...message(a, thread, "again"), id: m1.raw, recipient: b };
    const x = { ...message(a, thread, "x"), recipient: b };
    const y = { ...message(a, thread, "y"), recipient: b };
    const nobody = { ...message(a, thread, "z"), recipient: "71999999999" };
    const out = await sends().storeDirect([x, taken, nobody, y]);
    t.equal(out[0], 4);
    t.ok(out[1] instanceof IdClash, "an id taken is an IdClash");
    t.equal(out[2], null, "no such recipient");
    t.equal(out[3], 5, "no gap where the clash was");
    const there = await sends().committed([x.id, m2.raw, nobody.id, y.id]);
    t.same(
      [...there].sort(),
      [
        [String(m2.raw), 2],
        [String(x.id), 4],
        [String(y.id), 5],
      ].sort(),
      "committed: those stored, with their numbers",
    );
    t.same((await read(b)).last.get(inboxStream(b)), 5, "the read sees the inbox's newest number");
  });

  t.test(
    "group messages are numbered in their group; a non-member's is refused; the sender's own is acknowledged",
    async (t) => {
      const [a, b, out] = [await agent("Ann"), await agent(), await agent()];
      const g = await group([a, b]);
      const g2 = await group([a, b]);
      const m = [await post(a, g, "1"), await post(b, g, "2"), await post(a, g2, "other"), await post(a, g, "3")];
      t.same(
        m.map((x) => x.seq),
        [1, 2, 1, 3],
      );
      t.same(await sends().storeGroup([message(out, g, "no")]), [null], "not a member: null");
      const clash = await sends().storeGroup([{ ...message(a, g, "again"), id: m[0]!.raw }]);
      t.ok(clash[0] instanceof IdClash);
      t.equal((await post(a, g)).seq, 4, "no gap");
      t.same(await pending(a), [m[1]!.id], "the sender has only the others' messages");
      const b1 = await read(b, groupStream(g));
      t.same(
        b1.entries.map((e) => [e.stream, e.seq]),
        [
          [groupStream(g), 1],
          [groupStream(g), 3],
          [groupStream(g), 4],
        ],
      );
      t.same(b1.cursors.get(groupStream(g)), { acked: 0, above: [2], expired: 0 }, "b's own 2 is acknowledged above");
      const shown = JSON.parse(b1.entries[0]!.payload) as Record<string, unknown>;
      t.same(
        shown,
        {
          id: `msg_${m[0]!.id}`,
          thread_id: `thread_${g}`,
          from: { id: a, display_name: "Ann", avatar_url: null },
          to: `group_${g}`,
          body: "1",
          created_at: new Date(clock.ms).toISOString(),
        },
        "the payload as a recipient sees it",
      );
    },
  );

  t.test("the streams of members: the inbox first, then the groups they are in", async (t) => {
    const [a, b, c] = [await agent(), await agent(), await agent()];
    const g1 = await group([a, b]);
    const g2 = await group([b]);
    const of = await st().streamsOf([a, b, c]);
    t.same(of.get(a), [inboxStream(a), groupStream(g1)]);
    t.same(of.get(b)?.[0], inboxStream(b));
    t.same([...(of.get(b) ?? [])].sort(), [inboxStream(b), groupStream(g1), groupStream(g2)].sort());
    t.same(of.get(c), [inboxStream(c)], "no groups, no messages yet: the inbox alone");
  });

  t.test("a read hands out past the cursor, oldest first per stream, and each read counts one more", async (t) => {
    const [a, b] = [await agent(), await agent()];
    const g = await group([a, b]);
    const d1 = await direct(a, b);
    const g1 = await post(a, g);
    const d2 = await direct(a, b);
    const first = await read(b);
    t.same(
      first.entries.map((e) => [e.stream, e.id, e.deliveryCount]),
      [
        [inboxStream(b), d1.id, 1],
        [inboxStream(b), d2.id, 1],
        [groupStream(g), g1.id, 1],
      ],
      "each stream in number order (the inbox first), never handed out: 1",
    );
    t.same(
      first.last,
      new Map([
        [inboxStream(b), 2],
        [groupStream(g), 1],
      ]),
    );
    t.same(
      got(await read(b)),
      [
        [d1.id, 2],
        [d2.id, 2],
        [g1.id, 2],
      ],
      "handed out again: 2",
    );
    t.same(
      got(await read(b, inboxStream(b))),
      [
        [d1.id, 3],
        [d2.id, 3],
      ],
      "and 3, for one stream alone",
    );
    const d3 = await direct(a, b);
    t.same(
      got(await read(b, inboxStream(b))),
      [
        [d1.id, 4],
        [d2.id, 4],
        [d3.id, 1],
      ],
      "a message never handed out still says 1",
    );
    t.same(
      got(await read(b, inboxStream(b), 2)),
      [
        [d1.id, 5],
        [d2.id, 5],
      ],
      "at most `limit` per stream",
    );
    t.same(
      got(await read(b, inboxStream(b), 50, 2)),
      [[d3.id, 2]],
      "past `after`, counted on (the page cut at 2 had not handed it out)",
    );
    t.same(got(await read(b, groupStream(g))), [[g1.id, 3]], "the group's counts are its own");
  });

  t.test("reads in one call see one state: each counts what was handed out before the call", async (t) => {
    const [a, b] = [await agent(), await agent()];
    const m = await direct(a, b);
    const [x, y] = await st().backlog(
      [
        { member: b, stream: null, limit: 10, after: 0 },
        { member: b, stream: inboxStream(b), limit: 10, after: 0 },
      ],
      0n,
    );
    t.same([got(x!), got(y!)], [[[m.id, 1]], [[m.id, 1]]]);
    t.same(got(await read(b)), [[m.id, 2]], "recorded once for the next read");
  });

  t.test("plain acks in any order move the cursor over every run they complete", async (t) => {
    const [a, b] = [await agent(), await agent()];
    const g = await group([a, b]);
    const m = [await post(a, g), await post(a, g), await post(a, g), await post(a, g)];
    const s = groupStream(g);
    t.same(await ack(b, m[2]!.raw), { thread: g, seq: 3, acked: 0 }, "3 is kept above the cursor");
    t.same((await read(b, s)).cursors.get(s), { acked: 0, above: [3], expired: 0 });
    t.same(await pending(b), [m[0]!.id, m[1]!.id, m[3]!.id]);
    t.same(await ack(b, m[0]!.raw), { thread: g, seq: 1, acked: 1 });
    t.same(await ack(b, m[1]!.raw), { thread: g, seq: 2, acked: 3 }, "2 completes the run up to 3");
    t.same((await read(b, s)).cursors.get(s), { acked: 3, above: [], expired: 0 }, "the ack above was taken in");
    t.same(await ack(b, m[1]!.raw), { thread: g, seq: 2, acked: 3 }, "acking again is found, and moves nothing");
    t.same(await pending(b), [m[3]!.id]);
    // many at once, in any order, in one batch
    const more: { raw: bigint }[] = [m[3]!];
    for (let i = 0; i < 6; i++) more.push(await post(a, g));
    const order = [3, 0, 6, 5, 1, 4, 2];
    const outs = await st().ack(order.map((i) => ({ recipient: b, id: more[i]!.raw })));
    t.ok(
      outs.every((o) => o !== false),
      "each taken",
    );
    t.same((await read(b, s)).cursors.get(s), { acked: 10, above: [], expired: 0 }, "past them all");
  });

  t.test("a cumulative ack takes every earlier message of its stream, and of no other", async (t) => {
    const [a, c, b] = [await agent(), await agent(), await agent()];
    const g1 = await group([a, b]);
    const g2 = await group([a, b]);
    const first = [await post(a, g1), await post(a, g1)];
    const other = await post(a, g2);
    const d1 = await direct(a, b);
    const d2 = await direct(c, b);
    const third = await post(a, g1);
    const later = await post(a, g1);
    const d3 = await direct(a, b);
    t.same(
      await pending(b),
      [d1.id, d2.id, d3.id, first[0]!.id, first[1]!.id, third.id, later.id, other.id],
      "all delivered: the inbox, then each group in its numbers' order",
    );
    t.same(await ack(b, third.raw, true), { thread: g1, seq: 3, acked: 3 });
    t.same(
      await pending(b),
      [d1.id, d2.id, d3.id, later.id, other.id],
      "1, 2 and 3 are gone; the other group and the inbox stay",
    );
    t.same(await ack(b, d2.raw, true), { thread: 0n, seq: 2, acked: 2 }, "the inbox's: from anyone");
    t.same(await pending(b), [d3.id, later.id, other.id], "a1 and c1 are gone; a2 and the groups' stay");
    t.same(await ack(b, first[0]!.raw), { thread: g1, seq: 1, acked: 3 }, "a plain ack of one taken already");
    t.same(await ack(b, d1.raw, true), { thread: 0n, seq: 1, acked: 2 }, "a cumulative one moves nothing back");
    t.same(await ack(b, d3.raw, false), { thread: 0n, seq: 3, acked: 3 }, "a plain ack of the next moves it on");
  });

  t.test(
    "who may acknowledge what: the recipient, a member since before the message, the sender of its own",
    async (t) => {
      const [a, b, c, late, out] = [await agent(), await agent(), await agent(), await agent(), await agent()];
      const d = await direct(a, c);
      t.equal(await ack(b, d.raw), false, "a direct message to someone else");
      t.equal(await ack(a, d.raw, true), false, "nor its sender");
      t.equal(await ack(b, 42n), false, "no such message");
      const g = await group([a, b]);
      const before = await post(a, g);
      t.same(await ack(a, before.raw), { thread: g, seq: 1, acked: 1 }, "the sender's own: taken as it was stored");
      t.same(await st().join(g, [late, b]), [{ member: late, acked: 1 }], "a new member's cursor starts at the newest");
      const after = await post(b, g);
      t.same(await pending(late), [after.id], "only what came after joining");
      t.equal(await ack(late, before.raw), false, "the earlier one is not theirs");
      t.equal(await ack(late, before.raw, true), false, "nor through it");
      t.equal(await ack(out, after.raw), false, "a non-member's");
      // b's own message: accepted, and through it takes nothing b did not get
      const fromA = await post(a, g);
      const own = await post(b, g);
      t.same(await ack(b, own.raw, true), { thread: g, seq: 4, acked: 0 });
      t.same(await pending(b), [before.id, fromA.id], "a's messages still wait");
    },
  );

  t.test("leaving drops the cursor and what was pending; joining again starts at the newest", async (t) => {
    const [a, b, x] = [await agent(), await agent(), await agent()];
    const g = await group([a, b, x]);
    const m1 = await post(a, g);
    t.same(await read(x, groupStream(g)).then(got), [[m1.id, 1]]);
    t.equal(
      await st()
        .ack([{ recipient: x, id: m1.raw }])
        .then((o) => o[0] !== false),
      true,
    );
    await post(a, g);
    t.equal(await st().leave(g, x), true);
    t.equal(await st().leave(g, x), false, "not a member any more");
    t.same(await pending(x), [], "nothing pending");
    t.same((await st().streamsOf([x])).get(x), [inboxStream(x)]);
    t.same(await read(x, groupStream(g)).then((b) => [b.entries, b.last.size]), [[], 0], "no cursor to read past");
    t.same(await sends().storeGroup([message(x, g, "gone")]), [null], "and it may not send");
    const m3 = await post(a, g);
    t.same(await st().join(g, [x]), [{ member: x, acked: 3 }], "back, from the newest");
    const m4 = await post(a, g);
    t.same(await read(x, groupStream(g)).then(got), [[m4.id, 1]], "not from where it left");
    t.notOk((await pending(x)).includes(m3.id));
  });

  t.test("a socket taking a stream live counts everything as possibly delivered, until it stops", async (t) => {
    const [a, c] = [await agent(), await agent()];
    const w = await direct(a, c);
    await ack(c, w.raw);
    await st().mark([{ member: c, stream: inboxStream(c), seq: null }]);
    const m3 = await direct(a, c);
    t.same(got(await read(c)), [[m3.id, 2]], "a read elsewhere meanwhile says 2");
    await st().mark([{ member: c, stream: inboxStream(c), seq: m3.seq }]);
    const m4 = await direct(a, c);
    t.same(
      got(await read(c)),
      [
        [m3.id, 3],
        [m4.id, 1],
      ],
      "stopped: what was published to it counted, a later one not",
    );
    // an inbox never written to: taken live, it gets its cursor
    const fresh = await agent();
    await st().mark([{ member: fresh, stream: inboxStream(fresh), seq: null }]);
    t.same((await read(fresh)).cursors.get(inboxStream(fresh)), { acked: 0, above: [], expired: 0 });
    const first = await direct(a, fresh);
    t.same(got(await read(fresh)), [[first.id, 2]], "its first message may have been delivered");
    // a group acknowledged past where its socket stopped
    const g = await group([a, c]);
    const gm = [await post(a, g), await post(a, g)];
    await st().mark([{ member: c, stream: groupStream(g), seq: null }]);
    await st().ack([{ recipient: c, id: gm[1]!.raw, through: true }]);
    await st().mark([{ member: c, stream: groupStream(g), seq: 1 }]);
    const gm3 = await post(a, g);
    t.same(got(await read(c, groupStream(g))), [[gm3.id, 1]], "stopped: no longer taken live, what follows counts 1");
  });

  t.test("a stream's messages after a number, and messages by id", async (t) => {
    const [a, b] = [await agent(), await agent()];
    const g = await group([a, b]);
    const m = [await post(a, g, "1"), await post(b, g, "2"), await post(a, g, "3")];
    const after = await st().after(groupStream(g), 1, 10, 0n);
    t.same(
      after.map((p) => [p.key, p.seq, p.id]),
      [
        [groupStream(g), 2, m[1]!.id],
        [groupStream(g), 3, m[2]!.id],
      ],
    );
    t.same((await st().after(groupStream(g), 0, 2, 0n)).length, 2, "at most `limit`");
    const d = await direct(a, b, "direct");
    t.same(
      (await st().after(inboxStream(b), 0, 10, 0n)).map((p) => [p.key, p.seq, JSON.parse(p.payload).body]),
      [[inboxStream(b), d.seq, "direct"]],
    );
  });

  t.test("the newest number of many streams in one call; a stream with none is absent", async (t) => {
    const [a, b, c] = [await agent(), await agent(), await agent()];
    const g = await group([a, b]);
    const empty = await group([a]);
    await post(a, g);
    await post(b, g);
    await direct(a, b);
    const heads = await st().heads([
      groupStream(g),
      inboxStream(b),
      inboxStream(c),
      groupStream(empty),
      groupStream(9n),
    ]);
    t.same(
      [...heads].sort(([x], [y]) => (x < y ? -1 : 1)),
      [
        [inboxStream(b), 1],
        [groupStream(empty), 0],
        [groupStream(g), 2],
      ].sort(([x], [y]) => ((x as string) < (y as string) ? -1 : 1)),
      "b's inbox at 1, the group at 2, the empty group at 0; c's inbox (never written to) and no group: absent",
    );
    t.same(await st().heads([]), new Map(), "none asked, none answered");
  });

  t.test("retention's horizon: nothing below it is read; a cursor behind it moves on and says so once", async (t) => {
    const [a, b] = [await agent(), await agent()];
    const g = await group([a, b]);
    clock.ms += 60_000;
    const old = [await post(a, g, "o1"), await post(a, g, "o2"), await post(a, g, "o3")];
    const oldDirect = await direct(a, b, "od");
    clock.ms += 60_000;
    const horizon = firstIdAt(clock.ms - 1);
    const kept = await post(a, g, "kept");
    t.same(await ack(b, old[1]!.raw), { thread: g, seq: 2, acked: 0 }, "o2 acknowledged out of order");
    const before = await read(b, null, 50, 0, horizon);
    t.same(
      before.entries.map((e) => e.id),
      [kept.id],
      "below the horizon: not read",
    );
    t.same(
      (await st().after(groupStream(g), 0, 10, horizon)).map((p) => p.id),
      [kept.id],
    );
    await fx.expire(horizon);
    const s = groupStream(g);
    const x = await read(b, null, 50, 0, horizon);
    t.same(x.cursors.get(s), { acked: 3, above: [], expired: 2 }, "past o1..o3; o2 was acknowledged: 2 went unread");
    t.same(x.cursors.get(inboxStream(b))?.expired, 1);
    t.same(x.cursors.get(inboxStream(b))?.acked, oldDirect.seq);
    t.same((await read(b, null, 50, 0, horizon)).cursors.get(s)?.expired, 0, "said once");
    await fx.expire(horizon);
    t.same((await read(b, null, 50, 0, horizon)).cursors.get(s), { acked: 3, above: [], expired: 0 }, "again: nothing");
    t.same(got(await read(b, s, 50, 0, horizon)), [[kept.id, 5]], "what is kept still waits, counted on");
  });

  t.test(
    "direct threads: an agent takes messages from anyone, a person from friends unless it chose anyone",
    async (t) => {
      const [a, b] = [await agent(), await agent()];
      const id = ids.nextRaw();
      const thread = await sends().directThread(a, b, id);
      t.equal(thread, id, "made on first use");
      t.equal(await sends().directThread(b, a, ids.nextRaw()), id, "one thread for the pair, whichever side");
      const shy = await person("friends");
      const open = await person("anyone");
      t.equal(await sends().directThread(a, shy, ids.nextRaw()), null, "a stranger may not reach a person");
      t.not(await sends().directThread(a, open, ids.nextRaw()), null, "one who chose anyone");
      const friend = await agent();
      await fx.befriend(friend, shy);
      const ft = await sends().directThread(friend, shy, ids.nextRaw());
      t.not(ft, null, "a friend");
      t.equal(await sends().directThread(shy, friend, ids.nextRaw()), ft);
      t.equal(await sends().directThread(a, "71999999998", ids.nextRaw()), null, "no such principal");
    },
  );
}
