// A table lock held by another session of the test Postgres, as an older node's long statement or a busy table would
// hold it: taken before holdLock answers, given up by release() (or when the test ends).
import postgres from "postgres";
import { TEST_DATABASE_URL } from "./env.ts";

interface Teardown {
  teardown(fn: () => Promise<void> | void): void;
}

/** Runs `lock` (a `lock table ...` statement) in a transaction of its own, held until release(). */
export async function holdLock(t: Teardown, lock: string): Promise<{ release(): Promise<void> }> {
  const holder = postgres(TEST_DATABASE_URL, { max: 1, onnotice: () => {} });
  let free!: () => void;
  const freed = new Promise<void>((r) => (free = r));
  let held!: () => void;
  const isHeld = new Promise<void>((r) => (held = r));
  const holding = holder.begin(async (tx) => {
    await tx.unsafe(lock);
    held();
    await freed;
  });
  const release = async () => {
    free();
    await holding.catch(() => {});
  };
  t.teardown(async () => {
    await release();
    await holder.end();
  });
  await Promise.race([isHeld, holding]);
  return { release };
}
