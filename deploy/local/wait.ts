// A bounded wait for a condition, never for time to pass: the one way a test waits (test/helpers/wait.ts hands it to
// the tests) and the way the private servers (private-servers.ts) wait to come up. Bounded: it fails naming what it
// waited for, so a missed condition is a clear failure, not a hang until tap's timeout. (A test that must show
// something does NOT happen has no condition to wait on: it pauses briefly and says why.)

export interface UntilOptions {
  /** How long to wait at most, in ms (3 s unless told). */
  ms?: number;
  /** What is awaited, for the error when it never comes (a function: read when it fails, e.g. a process's output). */
  what?: string | (() => string);
  /** How often to check, in ms (2 unless told). A check that makes a request or a query deserves a wider gap. */
  every?: number;
}

/** What `until` rejects with when its time is up (a `cond` that throws rejects with its own error). */
export class TimedOut extends Error {}

/**
 * Resolves once `cond` answers true, with the ms it took; rejects once `ms` have passed without. `opts` may be the
 * bound alone. A `cond` that throws fails the wait at once: catch inside it what only means "not yet".
 */
export async function until(cond: () => boolean | Promise<boolean>, opts: number | UntilOptions = {}): Promise<number> {
  const { ms = 3000, what = "the condition", every = 2 } = typeof opts === "number" ? { ms: opts } : opts;
  const started = performance.now();
  while (!(await cond())) {
    if (performance.now() - started > ms)
      throw new TimedOut(`timed out after ${ms} ms waiting for ${typeof what === "function" ? what() : what}`);
    await new Promise((r) => setTimeout(r, every));
  }
  return performance.now() - started;
}

/** A probe of a server as a condition for `until`: while it fails (the server is not up yet) the answer is "not yet". */
export function probing(probe: () => Promise<boolean>): () => Promise<boolean> {
  return () => probe().catch(() => false);
}
