// `--verbose`: every HTTP exchange with its status and time, and every retry with why and how long it waits (stderr).
import type { RetryEvent } from "../index.ts";
import type { Write } from "./context.ts";

export function verbose(err: Write): { fetch: typeof fetch; onRetry: (e: RetryEvent) => void } {
  return {
    async fetch(input, init) {
      const started = Date.now();
      const what = `${init?.method ?? "GET"} ${new URL(input instanceof Request ? input.url : input).pathname}`;
      try {
        const res = await globalThis.fetch(input, init);
        const replayed =
          res.headers.get("idempotency-replayed") === "true"
            ? " (replayed: the first answer to this Idempotency-Key)"
            : "";
        err(`flockctl: ${what} ${res.status} in ${Date.now() - started} ms${replayed}`);
        return res;
      } catch (e) {
        err(`flockctl: ${what} failed after ${Date.now() - started} ms: ${(e as Error).message}`);
        throw e;
      }
    },
    onRetry(e) {
      const status =
        e.status === 0
          ? `got no answer${e.code ? ` (${e.code})` : ""}`
          : `answered ${e.status}${e.code ? ` ${e.code}` : ""}`;
      const why = e.retryAfter ? "Retry-After" : "backoff";
      const key = e.idempotencyKey ? `, same Idempotency-Key` : "";
      err(
        `flockctl: ${e.method} ${e.path} ${status}; retry ${e.retry} of ${e.maxRetries} in ${(e.waitMs / 1000).toFixed(1)} s (${why}${key})`,
      );
    },
  };
}
