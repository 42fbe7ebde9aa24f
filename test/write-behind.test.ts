// The write-behind log (runtime/messaging/write-behind.ts): writes wait and go out in batches; with `settle`, none
// goes out younger than one interval, so what is forgotten soon after it is recorded is never written.
import t from "tap";
import { WriteBehind } from "../runtime/messaging/write-behind.ts";
import { createLogger } from "../runtime/log.ts";

const EVERY = 100;
const log = createLogger("silent");
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

function recorder() {
  const written: { key: string; n: number; at: number }[] = [];
  const recordedAt = new Map<string, number>();
  const write = async (rows: { key: string; n: number }[]) => {
    for (const r of rows) written.push({ ...r, at: performance.now() });
  };
  return { written, recordedAt, write };
}

async function until(cond: () => boolean, ms = 3000) {
  const end = performance.now() + ms;
  while (!cond() && performance.now() < end) await sleep(10);
}

t.test("settle: nothing is written younger than one interval, even when recorded just before a batch", async (t) => {
  const r = recorder();
  const w = new WriteBehind<{ key: string; n: number }>("test", r.write, log, { everyMs: EVERY, settle: true });
  const rec = (key: string, n: number) => {
    if (!r.recordedAt.has(key)) r.recordedAt.set(key, performance.now());
    w.record(key, { key, n });
  };
  rec("a", 1);
  await sleep(EVERY - 15);
  rec("b", 1); // the first batch falls ~15 ms after this
  await until(() => r.written.length >= 2);
  t.same(r.written.map((x) => x.key).sort(), ["a", "b"], "both written once");
  for (const x of r.written) {
    // timers run on whole milliseconds: a millisecond or two of slack
    t.ok(x.at - r.recordedAt.get(x.key)! >= EVERY - 2, `${x.key} waited at least one interval (${(x.at - r.recordedAt.get(x.key)!).toFixed(0)} ms)`);
  }
});

t.test("settle: a write forgotten within its interval costs nothing; a later record merges into a settled one", async (t) => {
  const r = recorder();
  const w = new WriteBehind<{ key: string; n: number }>("test", r.write, log, {
    everyMs: EVERY,
    settle: true,
    merge: (a, b) => (a.n >= b.n ? a : b),
  });
  w.record("gone", { key: "gone", n: 1 });
  w.record("kept", { key: "kept", n: 1 });
  await sleep(EVERY * 1.3); // past the first batch: both are settled now, none written yet
  t.same(r.written, [], "nothing written at the first batch");
  w.forget("gone");
  w.record("kept", { key: "kept", n: 3 });
  w.record("kept", { key: "kept", n: 2 });
  await until(() => r.written.length >= 1);
  await sleep(EVERY * 2.5);
  t.same(
    r.written.map(({ key, n }) => ({ key, n })),
    [{ key: "kept", n: 3 }],
    "the forgotten one never written; the kept one once, merged",
  );
});

t.test("flush writes everything waiting at once, however young; without settle a batch goes each interval", async (t) => {
  const r = recorder();
  const w = new WriteBehind<{ key: string; n: number }>("test", r.write, log, { everyMs: EVERY, settle: true });
  w.record("x", { key: "x", n: 1 });
  await w.flush();
  t.same(r.written.map((x) => x.key), ["x"], "written by the flush");
  await sleep(EVERY * 2.5);
  t.equal(r.written.length, 1, "and not again");

  const plain = recorder();
  const p = new WriteBehind<{ key: string; n: number }>("test", plain.write, log, { everyMs: EVERY });
  const t0 = performance.now();
  p.record("y", { key: "y", n: 1 });
  await until(() => plain.written.length >= 1);
  const took = plain.written[0]!.at - t0;
  t.ok(took >= EVERY - 1 && took < EVERY * 10, `written at the first batch (${took.toFixed(0)} ms)`);
});

t.test("settle, past 20,000 new writes: the waiting batch goes at once, the new ones wait their interval", async (t) => {
  const r = recorder();
  const w = new WriteBehind<{ key: string; n: number }>("test", r.write, log, { everyMs: 60_000, settle: true });
  for (let i = 0; i < 20_000; i++) w.record(`a${i}`, { key: `a${i}`, n: 1 });
  await sleep(20);
  t.equal(r.written.length, 0, "the first 20,000 are not written young");
  for (let i = 0; i < 20_000; i++) w.record(`b${i}`, { key: `b${i}`, n: 1 });
  await until(() => r.written.length >= 20_000, 2000);
  t.equal(r.written.length, 20_000, "the next 20,000 push the first out");
  t.ok(r.written.every((x) => x.key.startsWith("a")));
  await w.flush();
  t.equal(r.written.length, 40_000, "a flush writes the rest");
});
