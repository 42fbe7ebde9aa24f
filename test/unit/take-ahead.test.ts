// Takes answered ahead of the shared engine (runtime/limits/take-ahead.ts): the first take of a bucket waits for the
// engine, the next ones are answered at once while more than two tokens would be left, each still taken from the
// engine behind its answer, and near empty they wait again, so the bucket refuses exactly when the engine does. A
// take another node made is learnt from the next reply; a failed take behind an answer forgets the figure. The
// engine here is the memory one behind a gate the test opens, on a clock the test moves.
import t from "tap";
import type { LimitsEngine, TakeResult } from "../../runtime/engines/limits.ts";
import { MemoryLimits } from "../../runtime/engines/memory/limits.ts";
import { TakeAhead } from "../../runtime/limits/take-ahead.ts";

/** The memory engine, each take held until `open` (or failing while `failing`), counting the takes it got. */
function gated() {
  const real = new MemoryLimits();
  const held: (() => void)[] = [];
  const state = { takes: 0, failing: false, gate: true };
  const engine: LimitsEngine = {
    take(key, capacity, windowMs, nowMs, cost) {
      state.takes++;
      if (state.failing) return Promise.reject(new Error("Redis went away"));
      const run = () => real.take(key, capacity, windowMs, nowMs, cost);
      if (!state.gate) return run();
      return new Promise<TakeResult>((resolve, reject) => held.push(() => run().then(resolve, reject)));
    },
    strike: (ip, rule, now) => real.strike(ip, rule, now),
    bannedUntil: (ip, now) => real.bannedUntil(ip, now),
    activeBans: (now) => real.activeBans(now),
  };
  const open = async () => {
    while (held.length > 0) held.shift()!();
    await new Promise((r) => setImmediate(r));
  };
  return { engine, real, state, open };
}

const isPromise = (x: unknown): x is Promise<TakeResult> => x instanceof Promise;

t.test("the first take waits; then at once while far from empty; near empty it waits; refused exactly", async (t) => {
  const g = gated();
  const ahead = new TakeAhead(g.engine);
  const cap = 6;
  const first = ahead.take("b", cap, 60_000, 0);
  t.ok(isPromise(first), "no figure yet: the first take waits for the engine");
  await g.open();
  t.same(await first, { allowed: true, remaining: 5, retryAfterMs: 0, resetMs: 10_000 });
  // 5 left: takes leaving 4, 3 and 2 are answered at once
  for (const left of [4, 3, 2]) {
    const r = ahead.take("b", cap, 60_000, 0);
    t.notOk(isPromise(r), `answered at once, ${left} left`);
    t.equal((r as TakeResult).remaining, left);
  }
  t.equal(g.state.takes, 4, "each was taken from the engine too");
  const near = ahead.take("b", cap, 60_000, 0);
  t.ok(isPromise(near), "1 would be left: it waits");
  await g.open();
  t.equal((await near).remaining, 1);
  const last = ahead.take("b", cap, 60_000, 0);
  await g.open();
  t.same(await last, { allowed: true, remaining: 0, retryAfterMs: 0, resetMs: 60_000 });
  const refused = ahead.take("b", cap, 60_000, 0);
  await g.open();
  t.equal((await refused).allowed, false, "the seventh of six is refused, as the engine says");
  // the engine agrees: every take reached it
  t.equal((await g.real.take("b", cap, 60_000, 0)).allowed, false);
});

t.test("the bucket refills on the clock; another node's takes are learnt from the next reply", async (t) => {
  const g = gated();
  g.state.gate = false;
  const ahead = new TakeAhead(g.engine);
  const cap = 10;
  await ahead.take("b", cap, 10_000, 0); // 9 left
  // another node takes 5 of them
  for (let i = 0; i < 5; i++) await g.real.take("b", cap, 10_000, 0);
  const stale = ahead.take("b", cap, 10_000, 0);
  t.notOk(isPromise(stale), "this node still thinks 8 are left");
  t.equal((stale as TakeResult).remaining, 8);
  await new Promise((r) => setImmediate(r));
  // the reply behind it said 3: the next would leave 2, answered at once; the one after waits
  t.equal((ahead.take("b", cap, 10_000, 0) as TakeResult).remaining, 2);
  await new Promise((r) => setImmediate(r));
  t.ok(isPromise(ahead.take("b", cap, 10_000, 0)), "1 would be left: it waits");
  await new Promise((r) => setImmediate(r));
  // 1 left; 5 seconds later 5 more came back (10 per 10 s)
  const later = ahead.take("b", cap, 10_000, 5000);
  t.notOk(isPromise(later), "refilled on the clock");
  t.equal((later as TakeResult).remaining, 5);
});

t.test(
  "a take behind an answer that fails forgets the figure; the next one waits and fails as the engine does",
  async (t) => {
    const g = gated();
    g.state.gate = false;
    const ahead = new TakeAhead(g.engine);
    await ahead.take("b", 10, 10_000, 0);
    g.state.failing = true;
    t.notOk(isPromise(ahead.take("b", 10, 10_000, 0)), "answered from the figure");
    await new Promise((r) => setImmediate(r));
    t.equal(ahead.size, 0, "its engine take failed: forgotten");
    const next = ahead.take("b", 10, 10_000, 0);
    t.ok(isPromise(next));
    await t.rejects(
      next as Promise<TakeResult>,
      /Redis went away/,
      "the outage reaches the caller (who fails open or closed)",
    );
  },
);
