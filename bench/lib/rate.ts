// An open-loop driver: calls `fire(i)` at a steady rate for a duration, never more than `maxOutstanding` at once.
export async function atRate(
  rate: number,
  seconds: number,
  maxOutstanding: number,
  fire: (i: number) => Promise<void>,
): Promise<{ fired: number; dropped: number; errors: number }> {
  const tick = 5;
  let i = 0;
  let due = 0; // calls owed so far: rate x elapsed time, so a late timer never changes the total
  let outstanding = 0;
  let dropped = 0;
  let errors = 0;
  const start = performance.now();
  const pending = new Set<Promise<void>>();
  while (performance.now() - start < seconds * 1000) {
    const owed = Math.floor((rate * (performance.now() - start)) / 1000) - due;
    for (let k = 0; k < owed; k++) {
      due++;
      if (outstanding >= maxOutstanding) {
        dropped++;
        continue;
      }
      outstanding++;
      const p: Promise<void> = fire(i++)
        .catch(() => {
          errors++;
        })
        .finally(() => {
          outstanding--;
          pending.delete(p);
        });
      pending.add(p);
    }
    const next = start + Math.ceil((performance.now() - start + 0.001) / tick) * tick;
    await new Promise((r) => setTimeout(r, Math.max(0, next - performance.now())));
  }
  await Promise.all(pending);
  return { fired: i, dropped, errors };
}
