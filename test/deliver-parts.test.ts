// A message for more recipients than one append part (APPEND_PART) is appended in parts sent together: each part's
// hand-outs are settled as that part answers, every recipient gets it once, and a part that fails has only its own
// recipients' mailboxes rebuilt, while the in-flight record is dropped only once every part is in.
import t from "tap";
import type { MailboxEntry } from "../runtime/engines/mailbox.ts";
import type { HandOutAfter, HandOutTarget } from "../runtime/messaging/handout.ts";
import { APPEND_PART } from "../runtime/engines/mailbox.ts";
import { FakeClock } from "./helpers/clock.ts";
import { startTestNode } from "./helpers/node.ts";
import { until } from "./messaging-helpers.ts";

/**
 * A reader that has everything up to its cursor and records what the sends settle for it; while an offer awaits its
 * append, the next one chains on it, as a WebSocket session's do (runtime/ws/session.ts).
 */
class Reader implements HandOutTarget {
  settled: (MailboxEntry | null)[] = [];
  private readonly out: string[] = [];
  constructor(private cursor: string) {}
  offer(id: string): HandOutAfter {
    const last = this.out[this.out.length - 1];
    this.out.push(id);
    return last === undefined ? { after: this.cursor } : { afterHanded: last };
  }
  settle(id: string, entry: MailboxEntry | null): void {
    this.out.splice(this.out.indexOf(id), 1);
    this.settled.push(entry);
    if (entry) this.cursor = entry.cursor;
  }
}

for (const engine of ["redis", "memory"] as const) {
  t.test(`a send to more recipients than one append part (${engine} engines)`, async (t) => {
    // the node's own timer-driven reconciler reads this clock, which stands still: it never finishes a send here
    const clock = new FakeClock(Date.now());
    const node = await startTestNode(t, { engine, now: clock.now });
    const hub = node.svc.hub;
    const inflight = node.svc.engines.inflight;
    const owner = node.lease.owner;
    const inFlight = async (id: string) => (await inflight.stale(owner, clock.now() + 1)).some((e) => e.id === id);
    const summary = () => new Set([...readers.values()].map((r) => JSON.stringify(r.settled.map((e) => (e ? [e.id, e.deliveryCount] : null)))));
    const mb = node.svc.engines.mailboxes;
    const tag = `${process.pid}x${Date.now() % 1_000_000}`;
    const recipients = Array.from({ length: 2 * APPEND_PART + 3 }, (_, i) => `9${tag}${String(i).padStart(4, "0")}`);
    const readers = new Map<string, Reader>();
    for (const p of recipients) {
      await mb.seed(p, [{ id: "1", payload: JSON.stringify({ id: "msg_1" }), deliveryCount: 1 }], true);
      const [e] = (await mb.fetch(p, 10, null))!;
      const reader = new Reader(e!.cursor);
      readers.set(p, reader);
      t.teardown(hub.handOuts.add(p, reader));
    }
    const parts: number[] = [];
    const append = mb.append.bind(mb);
    let failPart = -1;
    /** Set to hold the second part's append until it is released. */
    let hold: Promise<void> | undefined;
    mb.append = async (items) => {
      parts.push(items.length);
      if (parts.length - 1 === failPart) throw new Error("connection lost");
      if (parts.length === 2 && hold) await hold;
      return append(items);
    };
    t.teardown(() => {
      mb.append = append;
    });

    // the second part held back: the first part's readers are handed message 2 meanwhile (each part's hand-outs are
    // settled as that part answers), and the message stays in flight
    await inflight.add(owner, ["2"], clock.now());
    let release!: () => void;
    hold = new Promise((r) => (release = r));
    const sent = hub.deliver(recipients, "2", JSON.stringify({ id: "msg_2" }));
    const first = recipients.slice(0, APPEND_PART).map((p) => readers.get(p)!);
    await until(() => first.every((r) => r.settled.length === 1));
    t.ok(recipients.slice(APPEND_PART, 2 * APPEND_PART).every((p) => readers.get(p)!.settled.length === 0), "the held part's readers wait for it alone");
    t.ok(await inFlight("2"), "in flight until every part is in");
    release();
    hold = undefined;
    await sent;
    t.same(parts, [APPEND_PART, APPEND_PART, 3], "appended in parts of APPEND_PART, the rest in the last");
    t.same(summary(), new Set([JSON.stringify([["2", 1]])]), "every reader was handed message 2 once, counted as its first delivery");
    await until(async () => !(await inFlight("2")));
    t.pass("then dropped from the in-flight record");
    const after = await Promise.all(recipients.map((p) => mb.fetch(p, 10, null)));
    t.same(new Set(after.map((es) => (es ?? []).map((e) => e.id).join(","))), new Set(["1,2"]), "every mailbox holds it");

    // two sends whose appends overlap: each reader's second offer chains on its first, across the parts of both
    parts.length = 0;
    for (const r of readers.values()) r.settled = [];
    await Promise.all([hub.deliver(recipients, "4", JSON.stringify({ id: "msg_4" })), hub.deliver(recipients, "5", JSON.stringify({ id: "msg_5" }))]);
    t.equal(parts.length, 6, "three parts each");
    t.same(summary(), new Set([JSON.stringify([["4", 1], ["5", 1]])]), "every reader was handed 4, then 5 chained on it");

    // a part that fails: its recipients' readers are answered without the entry and their mailboxes cleared (rebuilt
    // from Postgres on the next fetch); the other parts are handed out as usual
    parts.length = 0;
    failPart = 1;
    for (const r of readers.values()) r.settled = [];
    await inflight.add(owner, ["3"], clock.now());
    await hub.deliver(recipients, "3", JSON.stringify({ id: "msg_3" }));
    t.ok(await inFlight("3"), "a part failed: the message stays in flight, for the reconciler to finish");
    const failed = recipients.slice(APPEND_PART, 2 * APPEND_PART);
    t.ok(failed.every((p) => readers.get(p)!.settled.length === 1 && readers.get(p)!.settled[0] === null), "the failed part: fetched instead");
    t.ok(recipients.filter((p) => !failed.includes(p)).every((p) => readers.get(p)!.settled[0]?.id === "3"), "the others: handed out");
    // the clears run in the background: every mailbox of the failed part comes to need a rebuild
    await until(async () => (await Promise.all(failed.map((p) => mb.fetch(p, 10, null)))).every((e) => e === null));
    t.pass("a failed part's mailboxes are to be rebuilt from Postgres");
    t.same((await mb.fetch(recipients[0]!, 10, null))?.map((e) => e.id), ["1", "2", "4", "5", "3"], "another part's is untouched");
  });
}
