// Cluster slots: which of many keys may go into one script call. On a Redis Cluster every key a script touches
// must hash to one slot; a call over many principals' keys (a group send's append, a batch of fetches or acks) is
// split into one call per slot. On one Redis everything is one group.
import { createRequire } from "node:module";

// cluster-key-slot (also what ioredis routes by) ships CommonJS without types
const calculateSlot = createRequire(import.meta.url)("cluster-key-slot") as (key: string) => number;

export const slotOf = (key: string): number => calculateSlot(key);

/** The positions of `items` grouped by the slot of each one's key, in first-seen order. */
function groupBySlot<T>(items: readonly T[], keyOf: (item: T) => string): number[][] {
  const groups = new Map<number, number[]>();
  items.forEach((item, i) => {
    const slot = calculateSlot(keyOf(item));
    let g = groups.get(slot);
    if (!g) {
      g = [];
      groups.set(slot, g);
    }
    g.push(i);
  });
  return [...groups.values()];
}

/**
 * Run `call` once per slot group of `items` (all at once; once for all of them when not `clustered`) and put each
 * call's per-item answers back in the order of `items`.
 */
export async function perSlot<T, R>(
  clustered: boolean,
  items: readonly T[],
  keyOf: (item: T) => string,
  call: (group: T[]) => Promise<R[]>,
): Promise<R[]> {
  if (!clustered) return call(items as T[]);
  const groups = groupBySlot(items, keyOf);
  if (groups.length === 1) return call(items as T[]);
  const out = new Array<R>(items.length);
  await Promise.all(
    groups.map(async (idx) => {
      const answers = await call(idx.map((i) => items[i]!));
      idx.forEach((i, j) => {
        out[i] = answers[j]!;
      });
    }),
  );
  return out;
}
