// The bench's Idempotency-Key: every request it makes that creates something (a message, a group message, a moment,
// a comment, a friend request, a group) carries a fresh key, as the SDK sends one (client/index.ts, `keyed`), unless
// the run was started with `--unkeyed`. Likes, acks, registrations and member additions carry none, as in the SDK.
import { IDEMPOTENCY_KEY_HEADER, newIdempotencyKey } from "../../client/idempotency.ts";

let keyed = true;

/** Turns the keys on (the default) or off (`npm run bench -- --unkeyed`) for the rest of the run. */
export function setKeyed(on: boolean): void {
  keyed = on;
}

/** Whether this run's creating requests carry an Idempotency-Key. */
export function isKeyed(): boolean {
  return keyed;
}

/** "keyed" or "unkeyed", for a run's printed header. */
export function keyedWord(): string {
  return keyed ? "keyed" : "unkeyed";
}

/** The run's mode in a line of its printed header. */
export function keyedLine(): string {
  return keyed
    ? "keyed: every request that creates something carries a fresh Idempotency-Key"
    : "unkeyed (--unkeyed): no request carries an Idempotency-Key";
}

/**
 * The headers to add to one creating request: a fresh `Idempotency-Key` (unique per logical request: a key reused
 * with another body answers 422), or none in an unkeyed run. Call it once per request, outside any retry loop, so
 * that a retry sends the same key, as the SDK's do.
 * @example
 * ```ts
 * fetch(`${url}/v1/moments`, { method: "POST", headers: { ...auth, ...keyHeader() }, body });
 * ```
 */
export function keyHeader(): Record<string, string> {
  return keyed ? { [IDEMPOTENCY_KEY_HEADER.toLowerCase()]: newIdempotencyKey() } : {};
}
