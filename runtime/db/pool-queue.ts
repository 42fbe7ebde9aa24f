// The queue postgres.js's pool keeps its connections and waiting queries in (its src/queue.js: push, shift, remove,
// length), written so that it never holds more slots than it has entries plus a bounded slack.
//
// Why (issue 34's soak): postgres.js 3.4.x frees a shifted slot only by setting it undefined, and resets its array
// only when a shift takes the last entry. A pool under a steady load below its size always has two or more
// connections idle, so its `open` queue never drains: it grew by one slot per query, and every query's move of a
// connection to `busy` ran `remove` (an indexOf over the whole array, not found) across all of them. The node's CPU
// rose from 41% to 59% over 60 minutes at fixed rates; a CPU profile of minute 20 against minute 1 put the growth in
// that `remove` (5 -> 38 samples a second) and nowhere else. runtime/db/postgres-driver.ts puts this queue in its place.

/** The interface postgres.js's pool calls. */
export interface PoolQueue<T> {
  readonly length: number;
  push(x: T): T;
  shift(): T | undefined;
  remove(x: T): T | null;
}

/** Shifted slots at the front are dropped once they pass this many and outnumber the live entries. */
const SLACK = 32;

/** The most slots any queue has held (its backing array's length), for the test that proves it stays bounded. */
let highWater = 0;
export const poolQueueHighWater = (): number => highWater;

/** Where the queues made during `capturingQueues` go. */
let made: PoolQueue<unknown>[] | undefined;

/** Run `f`, and answer the queues it made, in the order it made them (runtime/db/postgres-driver.ts reads a pool's). */
export function capturingQueues<R>(f: () => R): { out: R; queues: PoolQueue<unknown>[] } {
  const queues: PoolQueue<unknown>[] = [];
  const outer = made;
  made = queues;
  try {
    return { out: f(), queues };
  } finally {
    made = outer;
  }
}

export function poolQueue<T>(initial: readonly T[] = []): PoolQueue<T> {
  const q = makeQueue(initial);
  made?.push(q as PoolQueue<unknown>);
  return q;
}

function makeQueue<T>(initial: readonly T[]): PoolQueue<T> {
  let xs: (T | undefined)[] = initial.slice();
  let head = 0;
  const compact = () => {
    if (head > SLACK && head * 2 > xs.length) {
      xs = xs.slice(head);
      head = 0;
    }
  };
  return {
    get length() {
      return xs.length - head;
    },
    push(x) {
      xs.push(x);
      if (xs.length > highWater) highWater = xs.length;
      return x;
    },
    shift() {
      if (head === xs.length) return undefined;
      const out = xs[head];
      xs[head++] = undefined;
      if (head === xs.length) {
        xs = [];
        head = 0;
      } else compact();
      return out;
    },
    remove(x) {
      const at = xs.indexOf(x, head);
      if (at === -1) return null;
      xs.splice(at, 1);
      return x;
    },
  };
}
