// The presence of principals that long poll (runtime/messaging/poll-presence.ts) on the memory presence engine, the
// node's clock moved by hand and the sweep called as the node's timer would: online at the first poll, kept by polls
// and by a poll held past the grace, offline after the grace with no poll, an entry of another connection (a socket,
// another node's polls) keeping it online, every entry renewed in one batched call, and the stop dropping them all.
import t from "tap";
import { asFull, type Principal } from "../../runtime/auth.ts";
import { MemoryPresence } from "../../runtime/engines/memory/presence.ts";
import type { PresenceChanged } from "../../runtime/events/announcer.ts";
import { createLogger } from "../../runtime/log.ts";
import { PollPresence } from "../../runtime/messaging/poll-presence.ts";

const GRACE = 45_000;

const principal = (id: string): Principal => asFull({ id, kind: "agent", displayName: `agent ${id}`, avatarKey: null });

/** A node's poll presence on `engine`, with its clock, its announcements and its engine's refresh calls recorded. */
function node(engine = new MemoryPresence()) {
  const clock = { now: 1_000_000 };
  const told: Pick<PresenceChanged, "id" | "status">[] = [];
  const refreshes: string[][] = [];
  const presence = new Proxy(engine, {
    get(target, key, receiver) {
      if (key === "refresh")
        return (conns: { principal: string }[], now: number, ttl: number) => {
          refreshes.push(conns.map((c) => c.principal));
          return target.refresh(conns as never, now, ttl);
        };
      const v = Reflect.get(target, key, receiver) as unknown;
      return typeof v === "function" ? (v as (...a: unknown[]) => unknown).bind(target) : v;
    },
  });
  const pp = new PollPresence(
    {
      engines: { presence } as never,
      announce: {
        presence: async (e: PresenceChanged) => {
          told.push({ id: e.id, status: e.status });
        },
      } as never,
      now: () => clock.now,
      log: createLogger("silent"),
    },
    GRACE,
  );
  t.teardown(() => pp.stop());
  /** Move the clock and run the sweep, then let what it started behind settle. */
  const after = async (ms: number) => {
    clock.now += ms;
    pp.sweep();
    await new Promise((r) => setImmediate(r));
  };
  return { pp, engine, clock, told, refreshes, after };
}

const settle = () => new Promise((r) => setImmediate(r));

t.test("online at the first poll, kept by polls past the grace, offline a grace after the last", async (t) => {
  const { pp, engine, clock, told, after } = node();
  const a = principal("1");
  pp.poll(a)(); // a poll that answered at once
  await settle();
  t.same(told, [{ id: "1", status: "online" }], "online at its first poll");
  for (let i = 0; i < 6; i++) {
    await after(GRACE / 2);
    pp.poll(a)();
  }
  t.same(told.length, 1, "polls for three graces: never offline, never told again");
  await after(GRACE - 1);
  t.equal(pp.size, 1, "a moment before the grace is up: still polling");
  await after(1);
  t.equal(pp.size, 0, "the grace after its last poll began: gone");
  t.same(told[1], { id: "1", status: "offline" });
  t.same([...(await engine.online(["1"], clock.now))], [], "and gone from the engine");
});

t.test("a poll held past the grace keeps its principal until it ends", async (t) => {
  const { pp, told, after } = node();
  const end = pp.poll(principal("2"));
  await after(GRACE * 3);
  t.equal(pp.size, 1, "held three graces: kept");
  end();
  await after(GRACE - 1);
  t.equal(pp.size, 1, "ended: the grace runs from its end");
  await after(GRACE);
  t.same(
    told.map((e) => e.status),
    ["online", "offline"],
  );
});

t.test("another entry of the principal (a socket, another node's polls) keeps it online", async (t) => {
  const shared = new MemoryPresence();
  const one = node(shared);
  const two = node(shared);
  const a = principal("3");
  two.clock.now = one.clock.now;
  await shared.connect("3", "socket-on-two", one.clock.now, 10 * GRACE);
  one.pp.poll(a)();
  await settle();
  t.same(one.told, [], "a socket already online: the poll announces nothing");
  await one.after(GRACE);
  t.equal(one.pp.size, 0, "its polls stopped: this node's entry dropped");
  t.same(one.told, [], "but the socket keeps it online: no offline");
  two.pp.poll(a)();
  await shared.disconnect("3", "socket-on-two", two.clock.now);
  await two.after(GRACE);
  t.same(two.told, [{ id: "3", status: "offline" }], "the last entry gone, the other node's, announces offline");
});

t.test("every entry is renewed in one call each 30 s, none while no one polls", async (t) => {
  const { pp, refreshes, after } = node();
  const [a, b] = [principal("4"), principal("5")];
  pp.poll(a)();
  pp.poll(b)();
  await after(29_999);
  t.same(refreshes, [], "not before 30 s");
  pp.poll(a)();
  pp.poll(b)();
  await after(1);
  t.same(refreshes, [["4", "5"]], "both in one call");
  for (let i = 0; i < 6; i++) {
    await after(10_000);
    pp.poll(a)();
  }
  t.same(
    refreshes,
    [["4", "5"], ["4", "5"], ["4"]],
    "at 60 s both (the other's last poll 30 s ago, within its grace), at 90 s only the one still polling",
  );
  await after(3 * GRACE);
  t.same(refreshes.length, 3, "no one polling: no call");
});

t.test("the stop drops every entry, announcing offline, and takes no poll after", async (t) => {
  const { pp, engine, clock, told } = node();
  pp.poll(principal("6"))();
  const held = pp.poll(principal("7"));
  await settle();
  await pp.stop();
  held();
  t.same(told.map((e) => `${e.id} ${e.status}`).sort(), ["6 offline", "6 online", "7 offline", "7 online"]);
  t.same([...(await engine.online(["6", "7"], clock.now))], [], "none left in the engine");
  pp.poll(principal("8"))();
  await settle();
  t.equal(pp.size, 0, "a poll after the stop is not recorded");
});
