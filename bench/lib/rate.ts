// An open-loop driver: calls `fire(i)` at a steady rate for a duration, never more than `maxOutstanding` at once.
export async function atRate(
  rate: number,
  seconds: number,
  maxOutstanding: number,
  fire: (i: number) => Promise<void>,
): Promise<{ fired: number; dropped: number; errors: number }> {
  const tick = 5;
  const perTick = (rate * tick) / 1000;
  let owed = 0;
  let i = 0;
  let outstanding = 0;
  let dropped = 0;
  let errors = 0;
  const start = performance.now();
  const pending = new Set<Promise<void>>();
  while (performance.now() - start < seconds * 1000) {
    owed += perTick;
    while (owed >= 1) {
      owed -= 1;
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
