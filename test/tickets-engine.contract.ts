// The one-time tickets contract: every implementation must pass it. Time is passed in; nothing sleeps.
import { randomBytes } from "node:crypto";
import type { Test } from "tap";
import type { TicketEngine } from "../runtime/engines/tickets.ts";

export interface TicketsFixture {
  engine: TicketEngine;
  close(): Promise<void>;
}

const name = () => randomBytes(16).toString("base64url");

export function ticketsContract(t: Test, make: () => Promise<TicketsFixture>): void {
  let fx: TicketsFixture;
  t.before(async () => {
    fx = await make();
  });
  t.teardown(async () => {
    await fx.close();
  });
  const now = Date.now();

  t.test("a ticket is taken once: its value, then null", async (t) => {
    const k = name();
    await fx.engine.put(k, "value:with:colons", now + 30_000, now);
    t.equal(await fx.engine.take(k, now + 1), "value:with:colons");
    t.equal(await fx.engine.take(k, now + 2), null, "a second take finds nothing");
  });

  t.test("an expired ticket is null, and taking it removes it", async (t) => {
    const k = name();
    await fx.engine.put(k, "v", now + 30_000, now);
    t.equal(await fx.engine.take(k, now + 30_000), null, "at its expiry");
    const k2 = name();
    await fx.engine.put(k2, "v2", now + 30_000, now);
    t.equal(await fx.engine.take(k2, now + 29_999), "v2", "just before it");
  });

  t.test("an unknown ticket is null; tickets do not see each other", async (t) => {
    const a = name();
    const b = name();
    await fx.engine.put(a, "a", now + 30_000, now);
    await fx.engine.put(b, "b", now + 30_000, now);
    t.equal(await fx.engine.take(name(), now), null);
    t.equal(await fx.engine.take(b, now), "b");
    t.equal(await fx.engine.take(a, now), "a");
  });

  t.test("two takes at once: exactly one gets the value", async (t) => {
    const k = name();
    await fx.engine.put(k, "once", now + 30_000, now);
    const got = await Promise.all([fx.engine.take(k, now), fx.engine.take(k, now), fx.engine.take(k, now)]);
    t.same(
      got.filter((v) => v !== null),
      ["once"],
    );
  });
}
