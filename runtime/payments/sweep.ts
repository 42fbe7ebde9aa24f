// Claims a stopped node left behind. A claim is written before the facilitator is asked to verify, and a request
// that runs to its end marks it settled or failed; a node that stops in between leaves it claimed, and its payer
// then gets 409 for that authorization with nothing on record but "claimed". Each node marks such claims failed,
// not retryable (the authorization may have settled on chain before the stop), with a reason that says the
// outcome is unknown, as a settlement the facilitator never answered is. A settlement that does complete later
// still records itself as settled (payments-store.ts settledUpdate does not look at the status). The statement:
// claims-sweep-store.ts.
import type { Services } from "../services.ts";
import { sweepAbandonedClaims } from "./claims-sweep-store.ts";

/**
 * A claim untouched this long is abandoned: a request takes at most two facilitator calls of 60 s each
 * (runtime/payments/facilitator.ts) and two short statements.
 */
export const CLAIM_ABANDONED_MS = 10 * 60_000;
const SWEEP_EVERY_MS = 60_000;

/** Sweep now and every minute; the returned function stops it (after a sweep under way). */
export function startClaimSweeper(svc: Services): () => Promise<void> {
  let running: Promise<void> = Promise.resolve();
  const sweep = () => {
    running = sweepAbandonedClaims(svc.sql, CLAIM_ABANDONED_MS).then(
      (n) => {
        if (n === 0) return;
        svc.metrics.payments.failed.abandoned.inc(n);
        svc.log.warn({ claims: n }, "payment claims abandoned by a stopped node marked failed (outcome unknown)");
      },
      (err: unknown) => svc.log.warn({ err }, "payment claim sweep failed"),
    );
  };
  sweep();
  const timer = setInterval(sweep, SWEEP_EVERY_MS).unref();
  return async () => {
    clearInterval(timer);
    await running;
  };
}
