// The pool queue given to postgres.js (runtime/db/pool-queue.ts): the same answers as postgres.js's own queue for
// push, shift, remove and length, and a backing array that stays bounded when the queue never drains (postgres.js's
// own grew by one slot per query there: issue 34's CPU creep).
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import t from "tap";
import { poolQueue, poolQueueHighWater } from "../../runtime/db/pool-queue.ts";

type Q = { length: number; push(x: unknown): unknown; shift(): unknown; remove(x: unknown): unknown };
const require = createRequire(import.meta.url);
/** postgres.js's own queue, read from its file (not through the cache the driver seeds), to compare answers with. */
function originalQueue(): (initial?: unknown[]) => Q {
  const file = join(dirname(require.resolve("postgres")), "queue.js");
  const mod = { exports: {} as unknown };
  new Function("module", "exports", "require", readFileSync(file, "utf8"))(mod, mod.exports, require);
  return mod.exports as (initial?: unknown[]) => Q;
}

t.test("answers as postgres.js's own queue does, for a random run of operations", async (t) => {
  const Original = originalQueue();
  let seed = 7;
  const rand = (n: number) => (seed = (seed * 1103515245 + 12345) & 0x7fffffff) % n;
  const a = Original();
  const b = poolQueue<unknown>();
  const items = Array.from({ length: 12 }, (_, i) => ({ i }));
  const live = new Set<unknown>();
  for (let step = 0; step < 20_000; step++) {
    const op = rand(3);
    if (op === 0) {
      const x = items[rand(items.length)]!;
      if (live.has(x)) continue; // a connection is in one queue at most once
      live.add(x);
      if (b.push(x) !== a.push(x)) t.fail(`push at step ${step}`);
    } else if (op === 1) {
      const x = a.shift();
      if (b.shift() !== x) t.fail(`shift at step ${step}`);
      live.delete(x);
    } else {
      const x = items[rand(items.length)]!;
      if (b.remove(x) !== a.remove(x)) t.fail(`remove at step ${step}`);
      live.delete(x);
    }
    if (a.length !== b.length) t.fail(`length ${b.length}, postgres.js's ${a.length} at step ${step}`);
  }
  t.equal(b.length, a.length);
});

t.test(
  "a queue that never drains keeps a bounded backing array, where postgres.js's grows a slot per cycle",
  async (t) => {
    // the pool's pattern under a steady load below its size: three connections idle, one taken (shift) and moved to
    // busy (remove, not found), then back (push); the queue never empties
    const cycle = (q: Q) => {
      const c = q.shift();
      q.remove(c);
      q.push(c);
    };
    const conns = [{}, {}, {}];
    const ours = poolQueue<unknown>(conns);
    // postgres.js's queue copies its initial entries with `initial.slice()`: handing it our own array that way lets the
    // test read the length of the array it keeps (it replaces it only when a shift empties it, which never happens here)
    const backing: unknown[] = [...conns];
    const theirs = originalQueue()({ slice: () => backing } as unknown as unknown[]);
    for (let i = 0; i < 50_000; i++) {
      cycle(ours);
      cycle(theirs);
    }
    t.equal(ours.length, 3);
    t.equal(theirs.length, 3);
    t.equal(backing.length, 50_003, "postgres.js's own queue: one slot more per cycle");
    t.ok(poolQueueHighWater() <= 3 + 64, `ours never held more than ${poolQueueHighWater()} slots for 3 entries`);
  },
);
