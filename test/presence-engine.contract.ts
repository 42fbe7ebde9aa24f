// The presence engine contract: every implementation must pass it. Time is passed in; nothing sleeps.
import type { Test } from "tap";
import type { PresenceEngine } from "../runtime/engines/presence.ts";

export interface PresenceFixture {
  engine: PresenceEngine;
  close(): Promise<void>;
}

let n = 0;
const who = (label: string) => `${label}${process.pid}${Date.now() % 100000}${n++}`;

export function presenceContract(t: Test, make: () => Promise<PresenceFixture>): void {
  let fx: PresenceFixture;
  let pr: PresenceEngine;
  t.before(async () => {
    fx = await make();
    pr = fx.engine;
  });
  t.teardown(async () => {
    await fx.close();
  });

  t.test("online with the first connection, offline with the last", async (t) => {
    const p = who("a");
    const now = 1_000_000;
    t.equal(await pr.connect(p, "c1", now, 60_000), true, "first connection: came online");
    t.equal(await pr.connect(p, "c2", now, 60_000), false, "second connection: already online");
    t.equal(await pr.connect(p, "c1", now + 5, 60_000), false, "refreshing a connection");
    t.same([...(await pr.online([p], now))], [p]);
    t.equal(await pr.disconnect(p, "c1", now), false, "one connection left");
    t.equal(await pr.disconnect(p, "c2", now), true, "last connection gone: offline");
    t.equal(await pr.disconnect(p, "c2", now), false, "disconnecting twice announces nothing");
    t.same([...(await pr.online([p], now))], []);
  });

  t.test("online answers the subset that is online", async (t) => {
    const [a, b, c] = [who("b"), who("c"), who("d")];
    await pr.connect(a, "x", 10, 1000);
    await pr.connect(c, "y", 10, 1000);
    t.same([...(await pr.online([a, b, c], 10))].sort(), [a, c].sort());
    t.same([...(await pr.online([], 10))], []);
  });

  t.test("a connection not refreshed expires", async (t) => {
    const p = who("e");
    await pr.connect(p, "c", 100_000, 1000);
    t.equal((await pr.online([p], 100_999)).size, 1);
    t.equal((await pr.online([p], 101_000)).size, 0, "gone at its expiry");
    t.equal(await pr.connect(p, "c2", 101_000, 1000), true, "a new connection after expiry comes online again");
  });

  t.test("refresh keeps many connections alive at once", async (t) => {
    const [a, b] = [who("f"), who("g")];
    await pr.connect(a, "c", 0, 1000);
    await pr.connect(b, "c", 0, 1000);
    await pr.refresh(
      [
        { principal: a, connId: "c" },
        { principal: b, connId: "c" },
      ],
      900,
      1000,
    );
    t.equal((await pr.online([a, b], 1500)).size, 2);
    await pr.refresh([], 1500, 1000);
  });
}
