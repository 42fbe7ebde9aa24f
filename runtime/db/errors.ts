// What a Postgres error means to the code that ran the statement, by its SQLSTATE, and the one retry we do.

const codeOf = (err: unknown): unknown =>
  typeof err === "object" && err !== null ? (err as { code?: unknown }).code : undefined;

/** A foreign key was broken: a row the statement referenced was deleted meanwhile. */
export const isFkViolation = (err: unknown): boolean => codeOf(err) === "23503";

/** Postgres picked this statement's transaction as a deadlock victim and rolled it back whole. */
const isDeadlock = (err: unknown): boolean => codeOf(err) === "40P01";

/** A unique key was taken by a row this statement's snapshot did not see (23505). */
export const isUniqueViolation = (err: unknown): boolean => codeOf(err) === "23505";

/** Times a statement picked as a deadlock victim runs again. */
export const DEADLOCK_RETRIES = 3;

/**
 * Run a single-statement write, again when Postgres picks it as a deadlock victim (it rolled back whole, so running
 * it again is safe), a few times at most.
 */
export async function retryOnDeadlock<T>(statement: () => Promise<T>): Promise<T> {
  for (let attempt = 0; ; attempt++) {
    try {
      return await statement();
    } catch (err) {
      if (!isDeadlock(err) || attempt >= DEADLOCK_RETRIES) throw err;
    }
  }
}
