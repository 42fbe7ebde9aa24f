// The mailbox engine contract: every implementation must pass it. The engines are built with capacity 4
// so the spill-to-Postgres rules can be exercised with a handful of entries.
import type { Test } from "tap";
import type { MailboxEngine } from "../runtime/engines/mailbox.ts";

export interface MailboxFixture {
  engine: MailboxEngine;
  close(): Promise<void>;
}

export const CONTRACT_CAPACITY = 4;

let n = 0;
const who = (label: string) => `${label}${process.pid}${Date.now() % 100000}${n++}`;
const msg = (id: number | string, body = `m${id}`) => ({ id: String(id), payload: JSON.stringify({ id: `msg_${id}`, body }) });
const ids = (entries: { id: string }[] | null) => (entries ?? []).map((e) => e.id);
const counts = (entries: { deliveryCount: number }[] | null) => (entries ?? []).map((e) => e.deliveryCount);

export function mailboxContract(t: Test, make: () => Promise<MailboxFixture>): void {
  let fx: MailboxFixture;
  let mb: MailboxEngine;
  t.before(async () => {
    fx = await make();
    mb = fx.engine;
  });
  t.teardown(async () => {
    await fx.close();
  });

  const append = (p: string, ...items: ReturnType<typeof msg>[]) => mb.append(items.map((i) => ({ principal: p, ...i })));

  t.test("a mailbox never built answers null until seeded", async (t) => {
    const p = who("a");
    t.equal(await mb.fetch(p, 10, null), null);
    await mb.seed(p, [], true);
    t.same(await mb.fetch(p, 10, null), []);
  });

  t.test("entries come oldest first, each fetch counts a delivery, an ack removes for good", async (t) => {
    const p = who("b");
    await mb.seed(p, [], true);
    await append(p, msg(101), msg(102), msg(103));
    const first = await mb.fetch(p, 10, null);
    t.same(ids(first), ["101", "102", "103"]);
    t.same(counts(first), [1, 1, 1]);
    t.same(JSON.parse(first![0]!.payload), { id: "msg_101", body: "m101" });
    t.same(counts(await mb.fetch(p, 10, null)), [2, 2, 2], "unacknowledged entries come again, counted");
    t.equal(await mb.ack(p, "102"), true);
    t.equal(await mb.ack(p, "102"), false, "acking twice finds nothing the second time");
    t.equal(await mb.ack(p, "999"), false);
    const after = await mb.fetch(p, 10, null);
    t.same(ids(after), ["101", "103"]);
    t.same(counts(after), [3, 3]);
    await mb.ack(p, "101");
    await mb.ack(p, "103");
    t.same(await mb.fetch(p, 10, null), [], "an emptied mailbox stays built");
  });

  t.test("limit caps a fetch; the rest stay for the next", async (t) => {
    const p = who("c");
    await mb.seed(p, [], true);
    await append(p, msg(1), msg(2), msg(3));
    t.same(ids(await mb.fetch(p, 2, null)), ["1", "2"]);
    const all = await mb.fetch(p, 10, null);
    t.same(ids(all), ["1", "2", "3"]);
    t.same(counts(all), [2, 2, 1]);
  });

  t.test("a cursor reads only what came after it", async (t) => {
    const p = who("d");
    await mb.seed(p, [], true);
    await append(p, msg(10), msg(11));
    const first = await mb.fetch(p, 10, null);
    const cursor = first![first!.length - 1]!.cursor;
    t.same(await mb.fetch(p, 10, cursor), []);
    await append(p, msg(12));
    const next = await mb.fetch(p, 10, cursor);
    t.same(ids(next), ["12"]);
    t.same(counts(next), [1]);
    t.same(ids(await mb.fetch(p, 10, next![0]!.cursor)), []);
    t.same(counts(await mb.fetch(p, 10, null)), [2, 2, 2]);
  });

  t.test("appending the same message twice keeps one entry", async (t) => {
    const p = who("e");
    await mb.seed(p, [], true);
    await append(p, msg(7));
    await append(p, msg(7));
    t.same(ids(await mb.fetch(p, 10, null)), ["7"]);
  });

  t.test("one append call fills many mailboxes, each entry with its own payload, and one wake-up names them", async (t) => {
    const [p, q] = [who("f"), who("g")];
    await mb.seed(p, [], true);
    await mb.seed(q, [], true);
    const seen: string[] = [];
    const off = await mb.onWake((who) => seen.push(who));
    await mb.append([
      { principal: p, ...msg(1, "to both") },
      { principal: q, ...msg(1, "to both") },
      { principal: q, ...msg(2, "to q alone") },
    ]);
    const bodies = (entries: { id: string; payload: string }[] | null) =>
      (entries ?? []).map((e) => [e.id, (JSON.parse(e.payload) as { body: string }).body]);
    t.same(bodies(await mb.fetch(p, 10, null)), [["1", "to both"]]);
    t.same(bodies(await mb.fetch(q, 10, null)), [
      ["1", "to both"],
      ["2", "to q alone"],
    ]);
    await waitFor(() => seen.includes(p) && seen.includes(q));
    t.ok(seen.includes(p) && seen.includes(q), "both principals woken");
    await off();
  });

  t.test("seeding merges Postgres rows with what was appended meanwhile, ordered by id", async (t) => {
    const p = who("h");
    await append(p, msg(200), msg(300));
    t.equal(await mb.fetch(p, 10, null), null, "still not seeded");
    await mb.seed(p, [{ ...msg(99), deliveryCount: 2 }, { ...msg(200), deliveryCount: 0 }], true);
    const got = await mb.fetch(p, 10, null);
    t.same(ids(got), ["99", "200", "300"], "numeric order across id lengths; nothing lost");
    t.same(counts(got), [3, 1, 1], "Postgres counts carried on");
  });

  t.test("a mailbox lost counts a row it does not hold as delivered once; what it holds keeps its count", async (t) => {
    const p = who("w");
    await append(p, msg(2)); // appended while not built: never handed out
    await mb.seed(p, [{ ...msg(1), deliveryCount: 0 }, { ...msg(2), deliveryCount: 0 }, { ...msg(3), deliveryCount: 4 }], true);
    t.same(counts(await mb.fetch(p, 10, null)), [2, 1, 5], "1 may have been delivered from the lost mailbox: says 2");
  });

  t.test("a second seed of a built mailbox changes nothing", async (t) => {
    const p = who("i");
    await mb.seed(p, [{ ...msg(1), deliveryCount: 0 }], true);
    await mb.seed(p, [{ ...msg(2), deliveryCount: 0 }], true);
    t.same(ids(await mb.fetch(p, 10, null)), ["1"]);
  });

  t.test("beyond capacity the mailbox spills to Postgres and is re-seeded once acks drain it", async (t) => {
    const p = who("j");
    await mb.seed(p, [], true);
    for (let i = 1; i <= CONTRACT_CAPACITY + 2; i++) await append(p, msg(i));
    t.same(ids(await mb.fetch(p, 10, null)), ["1", "2", "3", "4"], "holds capacity entries");
    await append(p, msg(50));
    t.same(ids(await mb.fetch(p, 10, null)), ["1", "2", "3", "4"], "partial: newer messages wait in Postgres");
    await mb.ack(p, "1");
    await mb.ack(p, "2");
    t.same(ids(await mb.fetch(p, 10, null)), ["3", "4"], "half full: still served");
    await mb.ack(p, "3");
    t.equal(await mb.fetch(p, 10, null), null, "below half: must be seeded again");
    const rows = [4, 5, 6, 50].map((i) => ({ ...msg(i), deliveryCount: 0 }));
    await mb.seed(p, rows, true);
    const got = await mb.fetch(p, 10, null);
    t.same(ids(got), ["4", "5", "6", "50"]);
    t.same(counts(got), [4, 1, 1, 1], "the live count of an entry already held wins");
  });

  t.test("a seed larger than capacity keeps the oldest and stays partial", async (t) => {
    const p = who("k");
    const rows = [1, 2, 3, 4, 5, 6].map((i) => ({ ...msg(i), deliveryCount: 0 }));
    await mb.seed(p, rows, false);
    t.same(ids(await mb.fetch(p, 10, null)), ["1", "2", "3", "4"]);
    await append(p, msg(7));
    t.same(ids(await mb.fetch(p, 10, null)), ["1", "2", "3", "4"]);
  });

  t.test("clear forgets the mailbox and wakes its waiters", async (t) => {
    const p = who("l");
    await mb.seed(p, [], true);
    await append(p, msg(1));
    let woken = 0;
    const off = await mb.onWake((who) => {
      if (who === p) woken++;
    });
    await mb.clear(p);
    await waitFor(() => woken > 0);
    t.equal(await mb.fetch(p, 10, null), null);
    await off();
  });

  t.test("an append wakes whoever listens, naming the principal", async (t) => {
    const p = who("m");
    const seen: string[] = [];
    const off = await mb.onWake((who) => seen.push(who));
    await append(p, msg(1));
    await waitFor(() => seen.includes(p));
    t.ok(seen.includes(p));
    await off();
  });

  t.test("a wake-up names the message that arrived for each principal; a clear names none", async (t) => {
    const [p, q] = [who("w"), who("x")];
    const seen: [string, string | null][] = [];
    const off = await mb.onWake((who, id) => {
      if (who === p || who === q) seen.push([who, id]);
    });
    await mb.append([
      { principal: p, ...msg(31) },
      { principal: q, ...msg(31) },
      { principal: q, ...msg(32) },
    ]);
    await mb.clear(p);
    await waitFor(() => seen.length >= 4);
    t.same(
      seen.sort((a, b) => `${a[0]}${a[1]}`.localeCompare(`${b[0]}${b[1]}`)),
      [
        [p, "31"],
        [p, null],
        [q, "31"],
        [q, "32"],
      ].sort((a, b) => `${a[0]}${a[1]}`.localeCompare(`${b[0]}${b[1]}`)),
    );
    await off();
  });

  t.test("an append hands its entry to a reader who has everything up to its cursor, counted once", async (t) => {
    const p = who("h");
    await mb.seed(p, [], true);
    await append(p, msg(1));
    const [first] = (await mb.fetch(p, 10, null))!;
    const at = (id: number, after: string) => mb.append([{ principal: p, ...msg(id), after }]);
    const [handed] = await at(2, first!.cursor);
    t.type(handed, "string", "handed out: nothing after the reader's cursor");
    t.same(await mb.fetch(p, 10, handed!), [], "the handed entry's cursor is past it");
    const again = await mb.fetch(p, 10, first!.cursor);
    t.same(ids(again), ["2"], "still unacknowledged: a reader from further back gets it");
    t.same(counts(again), [2], "the hand-out counted as a delivery");
    t.equal(await mb.ack(p, "2"), true, "and it acks like any entry");

    const [h3] = await at(3, first!.cursor);
    t.type(h3, "string", "entries acknowledged since the cursor do not count against it");
    t.same(await at(3, h3!), [null], "a message already there is neither stored nor handed out again");
    t.same(ids(await mb.fetch(p, 10, null)), ["1", "3"]);
  });

  t.test("one append call hands out to each reader by its own cursor", async (t) => {
    const [p, q, r] = [who("o"), who("q"), who("r")];
    for (const x of [p, q, r]) {
      await mb.seed(x, [], true);
      await append(x, msg(1));
    }
    const cursor = async (x: string) => (await mb.fetch(x, 10, null))![0]!.cursor;
    const [cp, cq, cr] = [await cursor(p), await cursor(q), await cursor(r)];
    await append(q, msg(2)); // q's reader is now behind
    const handed = await mb.append([
      { principal: p, ...msg(3) },
      { principal: q, ...msg(3), after: cq },
      { principal: r, ...msg(3), after: cr },
    ]);
    t.equal(handed[0], null, "no cursor given");
    t.equal(handed[1], null, "q holds entry 2 after its cursor");
    t.type(handed[2], "string", "r's reader is caught up");
    t.same(await mb.fetch(r, 10, handed[2]!), []);
    t.same(counts(await mb.fetch(q, 10, cq)), [1, 1]);
    t.same(counts(await mb.fetch(p, 10, cp)), [1]);
  });

  t.test("appends that overlap chain their hand-outs: each after the one before it, only while it was handed out", async (t) => {
    const p = who("c");
    await mb.seed(p, [], true);
    await append(p, msg(1));
    const [e1] = (await mb.fetch(p, 10, null))!;
    // three sends whose appends are all called before the first answers, as under a busy group
    const [h2, h3, h4] = await Promise.all([
      mb.append([{ principal: p, ...msg(2), after: e1!.cursor }]),
      mb.append([{ principal: p, ...msg(3), afterHanded: "2" }]),
      mb.append([{ principal: p, ...msg(4), afterHanded: "3" }]),
    ]);
    t.type(h2![0], "string", "the first after the reader's cursor");
    t.type(h3![0], "string", "the second chained on the first");
    t.type(h4![0], "string", "the third on the second");
    t.same(await mb.fetch(p, 10, h4![0]!), [], "the last one's cursor is past them all");
    t.same(counts(await mb.fetch(p, 10, e1!.cursor)), [2, 2, 2], "each counted once by its hand-out");

    const q = who("d");
    await mb.seed(q, [], true);
    await append(q, msg(1));
    await mb.fetch(q, 10, null);
    t.same(await mb.append([{ principal: q, ...msg(2), afterHanded: "1" }]), [null], "1 came by a fetch, not a hand-out");
    t.same(await mb.append([{ principal: q, ...msg(3), afterHanded: "2" }]), [null], "2 was not handed out: the chain is broken");
    t.same(await mb.append([{ principal: q, ...msg(4), afterHanded: "9" }]), [null], "a message the mailbox does not hold");
    for (const id of ["1", "2", "3"]) await mb.ack(q, id); // room again (capacity 4)
    const [f4] = (await mb.fetch(q, 10, null))!;
    const [g5] = await mb.append([{ principal: q, ...msg(5), after: f4!.cursor }]);
    t.type(g5, "string", "a reader caught up again by a fetch is handed out to after its cursor");
    await append(q, msg(6)); // another message lands after 5 (not handed out)
    t.same(await mb.append([{ principal: q, ...msg(7), afterHanded: "5" }]), [null], "something lies after the entry chained on");
    t.same(ids(await mb.fetch(q, 10, g5!)), ["6", "7"]);

    const r = who("e");
    await mb.seed(r, [], true);
    await append(r, msg(1));
    const [k1] = (await mb.fetch(r, 10, null))!;
    const [k2] = await mb.append([{ principal: r, ...msg(2), after: k1!.cursor }]);
    t.type(k2, "string");
    const [k3] = await mb.append([{ principal: r, ...msg(3), after: k2! }]);
    t.type(k3, "string", "a later hand-out to a reader ...");
    t.same(await mb.append([{ principal: r, ...msg(4), afterHanded: "2" }]), [null], "... ends the chain on an earlier one");
  });

  t.test("no hand-out while a later entry waits, nor from a mailbox not built or partial", async (t) => {
    const p = who("i");
    await mb.seed(p, [], true);
    await append(p, msg(1));
    const [e1] = (await mb.fetch(p, 10, null))!;
    await append(p, msg(2));
    t.same(await mb.append([{ principal: p, ...msg(3), after: e1!.cursor }]), [null], "entry 2 lies after the cursor");
    t.same(counts(await mb.fetch(p, 10, e1!.cursor)), [1, 1], "2 and 3 each handed out once, by the fetch");

    const q = who("j");
    await append(q, msg(1));
    t.same(await mb.append([{ principal: q, ...msg(2), after: e1!.cursor }]), [null], "not built: its reader must seed first");
    const r = who("k");
    await mb.seed(r, [1, 2, 3, 4, 5].map((i) => ({ ...msg(i), deliveryCount: 0 })), false);
    const got = (await mb.fetch(r, 10, null))!;
    t.same(await mb.append([{ principal: r, ...msg(6), after: got[got.length - 1]!.cursor }]), [null], "partial: Postgres holds more");
    t.same(await append(r, msg(7)), [null], "no cursor, no hand-out");
  });

  t.test("an ack is remembered: a seed from rows read before it, and a late append, leave the message out", async (t) => {
    const p = who("s");
    t.equal(await mb.ack(p, "1"), false, "acked while the mailbox is not built (rebuilding)");
    await mb.seed(p, [1, 2].map((i) => ({ ...msg(i), deliveryCount: 0 })), true);
    t.same(ids(await mb.fetch(p, 10, null)), ["2"], "the rows read before the ack do not bring it back");
    t.same(await append(p, msg(1)), [null]);
    t.same(ids(await mb.fetch(p, 10, null)), ["2"], "nor does an append that comes late");
    const q = who("t");
    await append(q, msg(5));
    await mb.ack(q, "5");
    await mb.seed(q, [], true);
    t.same(await mb.fetch(q, 10, null), [], "an entry appended before the rebuild and acked meanwhile stays out");
  });

  t.test("an ensure stores only into a built mailbox, once", async (t) => {
    const [p, q] = [who("u"), who("v")];
    await mb.seed(p, [], true);
    const ensure = (x: string, id: number) => mb.append([{ principal: x, ...msg(id), ensure: true }]);
    await ensure(p, 1);
    await ensure(p, 1);
    t.same(ids(await mb.fetch(p, 10, null)), ["1"]);
    await ensure(q, 1);
    t.equal(await mb.fetch(q, 10, null), null, "not built: left to the rebuild from Postgres");
    await mb.seed(q, [], true);
    t.same(await mb.fetch(q, 10, null), [], "the ensure stored nothing there");
    await mb.ack(p, "1");
    await ensure(p, 1);
    t.same(await mb.fetch(p, 10, null), [], "an acknowledged message is not stored again");
  });

  t.test("a cumulative ack takes the entries of its thread handed out before it, and no other", async (t) => {
    const p = who("cum");
    const inThread = (id: number, thread: string) => ({ id: String(id), payload: JSON.stringify({ id: `msg_${id}`, thread_id: thread, body: `"thread_id":"thread_9"` }) });
    await mb.seed(p, [], true);
    // (capacity 4)
    await append(p, inThread(1, "thread_1"), inThread(2, "thread_2"), inThread(3, "thread_1"), inThread(5, "thread_1"));
    t.same(ids(await mb.fetch(p, 3, null)), ["1", "2", "3"], "1, 2 and 3 handed out; 5 not yet");
    t.same(await mb.handedBefore(p, "3"), ["1"], "of its thread only (2 is another's, and a body naming a thread is text)");
    await mb.ack(p, "2");
    await append(p, inThread(4, "thread_1")); // appended late: after 5 in the mailbox, not handed out
    t.same(await mb.handedBefore(p, "5"), ["1", "3"], "5 itself need not have been handed out");
    await mb.ack(p, "1");
    await append(p, inThread(6, "thread_1"));
    t.same(await mb.handedBefore(p, "6"), ["3"], "5 and 4, never handed out, are left alone");
    t.same(ids(await mb.fetch(p, 10, null)), ["3", "5", "4", "6"], "in mailbox order, 4 after 5");
    t.same(await mb.handedBefore(p, "6"), ["3", "5", "4"], "once handed out, they go with a cumulative ack");
    t.same(await mb.handedBefore(p, "1"), [], "nothing before the first");
    t.same(await mb.handedBefore(p, "99"), [], "a message not in the mailbox takes nothing");
    t.same(await mb.handedBefore(who("none"), "1"), [], "nor does one of a mailbox never built");
  });

  t.test("payloads survive byte for byte", async (t) => {
    const p = who("n");
    await mb.seed(p, [], true);
    const body = "héllo 🌍 \"quotes\" \\ \n newline";
    await append(p, msg(1, body));
    t.same(JSON.parse((await mb.fetch(p, 1, null))![0]!.payload), { id: "msg_1", body });
  });
}

async function waitFor(cond: () => boolean, ms = 2000): Promise<void> {
  const until = Date.now() + ms;
  while (!cond()) {
    if (Date.now() > until) throw new Error("condition not met in time");
    await new Promise((r) => setImmediate(r));
  }
}
