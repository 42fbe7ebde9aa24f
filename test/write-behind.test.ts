// The write-behind log (runtime/messaging/write-behind.ts): writes wait and go out in batches; with `settle`, none
// goes out in the first batch after it was recorded (so it is at least one interval old), and what is forgotten
// meanwhile is never written. The batches are driven by hand through a timer the test holds.
import t from "tap";
import { type BatchTimer, WriteBehind } from "../runtime/messaging/write-behind.ts";
import { createLogger } from "../runtime/log.ts";

const log = createLogger("silent");
/** Let the write's promise chain run. */
const settle = () => new Promise((r) => setImmediate(r));

/** A timer that fires only when told; `armed` says whether a batch is due. */
function handTimer() {
  let due: (() => void) | undefined;
  let n = 0;
  const timer: BatchTimer = {
    set: (fn) => {
      due = fn;
      return ++n;
    },
    clear: () => {
      due = undefined;
    },
  };
  return {
    timer,
    get armed() {
      return due !== undefined;
    },
    /** The batch falls now. */
    async fire() {
      const fn = due;
      due = undefined;
      fn?.();
      await settle();
    },
  };
}

function writer(opts: { settle?: boolean; merge?: (a: Row, b: Row) => Row } = {}) {
  const clock = handTimer();
  const batches: string[][] = [];
  const w = new WriteBehind<Row>(
    "test",
    async (rows) => {
      batches.push(rows.map((r) => `${r.key}=${r.n}`));
    },
    log,
    { everyMs: 100, timer: clock.timer, ...opts },
  );
  const record = (key: string, n = 1) => w.record(key, { key, n });
  return { w, clock, batches, record };
}

interface Row {
  key: string;
  n: number;
}

t.test("settle: a write goes in the second batch after it was recorded, never the first", async (t) => {
  const { clock, batches, record } = writer({ settle: true });
  record("a");
  t.ok(clock.armed, "a batch is due");
  await clock.fire();
  t.same(batches, [], "the first batch after it writes nothing");
  record("b"); // recorded just before the next batch
  await clock.fire();
  t.same(batches, [["a=1"]], "a goes in the second; b, recorded since the first, waits");
  await clock.fire();
  t.same(batches, [["a=1"], ["b=1"]]);
  t.notOk(clock.armed, "nothing waits: no batch is due");
});

t.test("settle: a write forgotten before its batch costs nothing; a later record merges into a settled one", async (t) => {
  const { w, clock, batches, record } = writer({ settle: true, merge: (a, b) => (a.n >= b.n ? a : b) });
  record("gone");
  record("kept");
  await clock.fire();
  w.forget("gone");
  record("kept", 3);
  record("kept", 2);
  await clock.fire();
  await clock.fire();
  t.same(batches, [["kept=3"]], "the forgotten one never written; the kept one once, merged");
});

t.test("flush writes everything waiting at once, however young; without settle each batch takes what waits", async (t) => {
  const s = writer({ settle: true });
  s.record("x");
  await s.w.flush();
  t.same(s.batches, [["x=1"]], "written by the flush");
  t.notOk(s.clock.armed, "and no batch left due");

  const p = writer();
  p.record("y");
  t.same(p.batches, [], "not at once");
  await p.clock.fire();
  t.same(p.batches, [["y=1"]], "in the first batch");
});

t.test("settle, past 20,000 new writes: the waiting batch goes at once, the new ones wait their interval", async (t) => {
  const { w, batches, record } = writer({ settle: true });
  for (let i = 0; i < 20_000; i++) record(`a${i}`);
  await settle();
  t.equal(batches.length, 0, "the first 20,000 are not written young");
  for (let i = 0; i < 20_000; i++) record(`b${i}`);
  await settle();
  t.equal(batches.length, 1, "the next 20,000 push the first out");
  t.equal(batches[0]!.length, 20_000);
  t.ok(batches[0]!.every((r) => r.startsWith("a")));
  await w.flush();
  t.equal(batches[1]!.length, 20_000, "a flush writes the rest");
});
