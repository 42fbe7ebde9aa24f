// The group-commit batcher (runtime/batcher.ts): items that arrive while a batch runs form the next one,
// each caller gets its own outcome; and a statement Postgres rolled back as a deadlock victim runs again.
import t from "tap";
import { Batcher } from "../../runtime/batcher.ts";
import { DEADLOCK_RETRIES, retryOnDeadlock } from "../../runtime/db/errors.ts";

const deadlock = () => Object.assign(new Error("deadlock detected"), { code: "40P01" });

/** A promise the test settles by hand: a batch that runs until the test says it is done. */
function gate() {
  let open!: () => void;
  const opened = new Promise<void>((r) => (open = r));
  return { open, opened };
}

t.test("items arriving during a batch go together in the next; per-item errors stay per item", async (t) => {
  const runs: number[][] = [];
  const first = gate();
  const b = new Batcher<number, number>(async (items) => {
    runs.push(items);
    await first.opened;
    return items.map((i) => (i === 3 ? new Error("three") : i * 10));
  }, 1);
  const pushed = [1, 2, 3, 4].map((i) => b.push(i));
  t.same(runs, [[1]], "the first runs at once; the rest wait for it");
  first.open();
  const out = await Promise.allSettled(pushed);
  t.same(runs, [[1], [2, 3, 4]], "the first alone, the rest together");
  t.same(
    out.map((o) => (o.status === "fulfilled" ? o.value : "rejected")),
    [10, 20, "rejected", 40],
  );
});

t.test("pending counts the items not answered yet: queued, and in the batch under way", async (t) => {
  const first = gate();
  const b = new Batcher<number, number>(async (items) => {
    await first.opened;
    return items;
  }, 1);
  t.equal(b.pending, 0);
  const pushed = [1, 2, 3].map((i) => b.push(i));
  t.equal(b.pending, 3, "one running, two queued");
  first.open();
  await Promise.all(pushed);
  await b.drain();
  t.equal(b.pending, 0, "all answered");
  const failing = new Batcher<number, number>(async () => Promise.reject(new Error("down")), 1);
  await t.rejects(failing.push(1));
  await failing.drain();
  t.equal(failing.pending, 0, "a failed batch is not counted after it");
});

t.test("a statement picked as a deadlock victim runs again; other errors fail at once", async (t) => {
  let calls = 0;
  const answer = await retryOnDeadlock(async () => {
    calls++;
    if (calls <= 2) throw deadlock();
    return 7;
  });
  t.equal(answer, 7, "answered after two deadlocks");
  t.equal(calls, 3);

  let tries = 0;
  const always = retryOnDeadlock(async () => {
    tries++;
    throw deadlock();
  });
  await t.rejects(always, { code: "40P01" }, "gives up after its retries");
  t.equal(tries, DEADLOCK_RETRIES + 1);

  let other = 0;
  const failing = retryOnDeadlock(async () => {
    other++;
    throw new Error("boom");
  });
  await t.rejects(failing, { message: "boom" });
  t.equal(other, 1, "not retried");
});

t.test("drain resolves once every item pushed so far has its answer", async (t) => {
  const running = gate();
  const b = new Batcher<number, number>(async (items) => {
    await running.opened;
    return items;
  }, 1);
  await b.drain(); // nothing pushed: at once
  const answered: number[] = [];
  const pushed = [1, 2, 3].map((i) => b.push(i).then((v) => answered.push(v)));
  let drained = false;
  const draining = b.drain().then(() => (drained = true));
  await new Promise((r) => setImmediate(r));
  t.notOk(drained, "not while a batch runs");
  running.open();
  await draining;
  t.same(answered.sort(), [1, 2, 3], "both batches answered before drain resolved");
  await Promise.all(pushed);
});
