// The limits engine contract: every implementation must pass it. Time is passed in; nothing sleeps.
import type { Test } from "tap";
import type { LimitsEngine } from "../runtime/engines/limits.ts";

export interface LimitsFixture {
  engine: LimitsEngine;
  close(): Promise<void>;
}

let n = 0;
const key = (label: string) => `${label}:${process.pid}:${Date.now()}:${n++}`;
/** An address of its own for each test (documentation range), as strikes and bans take only addresses. */
const hex = (v: number) => (v & 0xffff).toString(16);
const addr = () => `2001:db8:${hex(process.pid)}:${hex(Date.now())}:${hex(Date.now() / 65536)}::${hex(n++)}`;

export function limitsContract(t: Test, make: () => Promise<LimitsFixture>): void {
  let fx: LimitsFixture;
  t.before(async () => {
    fx = await make();
  });
  t.teardown(async () => {
    await fx.close();
  });

  t.test("a full bucket allows exactly its capacity, then refuses", async (t) => {
    const k = key("cap");
    const now = 1_000_000;
    for (let i = 0; i < 10; i++) {
      const r = await fx.engine.take(k, 10, 60_000, now);
      t.equal(r.allowed, true, `take ${i + 1}`);
      t.equal(r.remaining, 9 - i);
    }
    const r = await fx.engine.take(k, 10, 60_000, now);
    t.equal(r.allowed, false);
    t.equal(r.remaining, 0);
    t.equal(r.retryAfterMs, 6_000, "one token refills in window/capacity");
    t.equal(r.resetMs, 60_000);
  });

  t.test("tokens refill evenly over the window", async (t) => {
    const k = key("refill");
    const t0 = 5_000_000;
    for (let i = 0; i < 5; i++) await fx.engine.take(k, 5, 60_000, t0);
    t.equal((await fx.engine.take(k, 5, 60_000, t0 + 11_999)).allowed, false, "not yet one token back");
    t.equal((await fx.engine.take(k, 5, 60_000, t0 + 12_000)).allowed, true, "one token after window/capacity");
    t.equal((await fx.engine.take(k, 5, 60_000, t0 + 12_000)).allowed, false);
    const later = await fx.engine.take(k, 5, 60_000, t0 + 12_000 + 60_000);
    t.equal(later.allowed, true);
    t.equal(later.remaining, 4, "never more than capacity after a long pause");
  });

  t.test("per-second buckets: 10 per second", async (t) => {
    const k = key("sec");
    const t0 = 9_000_000;
    let allowed = 0;
    for (let i = 0; i < 15; i++) if ((await fx.engine.take(k, 10, 1000, t0)).allowed) allowed++;
    t.equal(allowed, 10);
    const r = await fx.engine.take(k, 10, 1000, t0);
    t.equal(r.retryAfterMs, 100);
    t.equal((await fx.engine.take(k, 10, 1000, t0 + 100)).allowed, true);
  });

  t.test("buckets are independent by key", async (t) => {
    const a = key("a");
    const b = key("b");
    t.equal((await fx.engine.take(a, 1, 60_000, 1)).allowed, true);
    t.equal((await fx.engine.take(a, 1, 60_000, 1)).allowed, false);
    t.equal((await fx.engine.take(b, 1, 60_000, 1)).allowed, true);
  });

  t.test("a clock that goes backwards never mints tokens", async (t) => {
    const k = key("back");
    t.equal((await fx.engine.take(k, 1, 60_000, 100_000)).allowed, true);
    t.equal((await fx.engine.take(k, 1, 60_000, 50_000)).allowed, false);
  });

  t.test("concurrent takes never over-admit", async (t) => {
    const k = key("race");
    const results = await Promise.all(Array.from({ length: 50 }, () => fx.engine.take(k, 10, 60_000, 42)));
    t.equal(results.filter((r) => r.allowed).length, 10);
  });

  t.test("strikes ban an IP once they reach the threshold within the window", async (t) => {
    const ip = addr();
    const rule = { strikes: 3, windowMs: 10_000, banMs: 300_000 };
    const t0 = 2_000_000;
    t.equal(await fx.engine.strike(ip, rule, t0), 0);
    t.equal(await fx.engine.strike(ip, rule, t0 + 1), 0);
    t.equal(await fx.engine.bannedUntil(ip, t0 + 1), 0);
    t.equal(await fx.engine.strike(ip, rule, t0 + 2), t0 + 2 + 300_000);
    t.equal(await fx.engine.bannedUntil(ip, t0 + 3), t0 + 2 + 300_000);
    t.equal(await fx.engine.bannedUntil(ip, t0 + 2 + 300_000), 0, "the ban ends on time");
  });

  t.test("strikes spread wider than the window never ban", async (t) => {
    const ip = addr();
    const rule = { strikes: 3, windowMs: 10_000, banMs: 300_000 };
    let now = 3_000_000;
    for (let i = 0; i < 10; i++) {
      t.equal(await fx.engine.strike(ip, rule, now), 0);
      now += 6_000;
    }
    t.equal(await fx.engine.bannedUntil(ip, now), 0);
  });

  t.test("only an address is struck or banned", async (t) => {
    const rule = { strikes: 1, windowMs: 10_000, banMs: 300_000 };
    for (const text of ["192.0.2.55 99999999999999", key("word"), "", "10.0.0.1, 10.0.0.2"]) {
      t.equal(await fx.engine.strike(text, rule, 4_000_000), 0, JSON.stringify(text));
      t.equal(await fx.engine.bannedUntil(text, 4_000_000), 0);
    }
  });

  t.test("the running bans are listed for a node starting up, ended ones are not", async (t) => {
    const rule = { strikes: 1, windowMs: 10_000, banMs: 60_000 };
    const t0 = 7_000_000;
    const early = addr();
    const late = addr();
    t.equal(await fx.engine.strike(early, rule, t0), t0 + 60_000);
    t.equal(await fx.engine.strike(late, rule, t0 + 30_000), t0 + 90_000);
    const during = await fx.engine.activeBans(t0 + 40_000);
    t.equal(during.get(early), t0 + 60_000);
    t.equal(during.get(late), t0 + 90_000);
    const after = await fx.engine.activeBans(t0 + 60_000);
    t.notOk(after.has(early), "a ban that has ended is not listed");
    t.equal(after.get(late), t0 + 90_000);
  });
}
