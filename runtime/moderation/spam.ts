// Spam limits (issue 53): what the route's own rate limit does not catch. Both are token buckets of the limits
// engine (runtime/engines/limits.ts: Redis, or memory on one node), taken through the limiter, with their sizes in
// runtime/limits/policies.ts and configuration over them (FLOCK_DUPLICATE_*, FLOCK_NEW_ACCOUNT_*):
//   - the same text, normalized (Unicode NFKC, case folded, runs of whitespace as one space), posted by one principal
//     as a moment or a comment: FLOCK_DUPLICATE_LIMIT at once, then one more per FLOCK_DUPLICATE_WINDOW / limit; past
//     it 429 `duplicate_content`. The bucket is keyed by the principal and the SHA-256 of the text (never the text),
//     and expires with its window;
//   - an account younger than FLOCK_NEW_ACCOUNT_AGE (its id tells when it was made: runtime/ids.ts) also takes from
//     an hourly bucket of its own for moments, comments and friend requests: 429 `rate_limited`.
// Neither strikes the caller's address toward an IP ban beyond what the limiter's 429s do. Like every per-principal
// limit, they fail open while Redis is out of reach.
import { createHash } from "node:crypto";
import type { Principal } from "../auth.ts";
import { ApiError } from "../errors.ts";
import { idTime } from "../ids.ts";
import type { Services } from "../services.ts";

export type Spammable = "moments" | "comments" | "friend_requests";

/** A text as the duplicate limit compares it. */
export function normalized(text: string): string {
  return text.normalize("NFKC").toLowerCase().replace(/\s+/gu, " ").trim();
}

/** When a principal was made (ms), from its id. */
export function createdAt(p: Principal): number {
  return idTime(BigInt(p.kind === "human" ? p.id.slice(1) : p.id));
}

/** Whether `p` is a new account now (FLOCK_NEW_ACCOUNT_AGE; 0 turns the new-account limits off). */
export function isNew(svc: Services, p: Principal): boolean {
  const age = svc.config.FLOCK_NEW_ACCOUNT_AGE;
  return age > 0 && svc.now() - createdAt(p) < age * 1000;
}

const duplicate = (retry: number) =>
  new ApiError(
    "duplicate_content",
    "the same text was posted too often; write something else, or wait",
    { retry_after: retry },
    { "Retry-After": String(retry) },
  );

/**
 * The spam limits of one post by `p`: the duplicate limit on `text` (moments and comments), then the new-account
 * limit of `what`. Throws 429 when one is exceeded. The route's own RateLimit fields are left as they were.
 */
export async function checkSpam(svc: Services, p: Principal, ip: string, what: Spammable, text?: string) {
  // fail open while Redis is out, as every per-principal limit does (runtime/http/pipeline.ts)
  if (svc.circuits.redis?.isOpen) return;
  try {
    // one after the other: a refused copy takes nothing from the new-account bucket (nor strikes the address). A new
    // text's bucket waits for the engine; the new-account one is mostly answered ahead (limits/take-ahead.ts)
    if (text !== undefined) {
      const hash = createHash("sha256").update(normalized(text)).digest("base64url").slice(0, 22);
      await svc.limiter.enforce("duplicate_content", `${p.id}:${hash}`, ip, {}, duplicate);
    }
    if (isNew(svc, p)) await svc.limiter.enforce(`new_account_${what}`, p.id, ip, {});
  } catch (err) {
    if (svc.circuits.trip(err) === undefined) throw err;
  }
}
