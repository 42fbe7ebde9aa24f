// Idempotency-Key (IETF httpapi draft "The Idempotency-Key HTTP Header Field"): every call that creates something
// (a message, a moment, a comment, a friend request, a group, an upload) sends one key, the same on each of its
// SPEC section 7 retries, so a retry after a lost answer gets the first answer back (`Idempotency-Replayed: true`)
// instead of creating the thing twice.

/** The request header. */
export const IDEMPOTENCY_KEY_HEADER = "Idempotency-Key";
/** The answer header marking a replayed (first) answer. */
export const IDEMPOTENCY_REPLAYED_HEADER = "Idempotency-Replayed";

/** What the server accepts: 1 to 255 visible ASCII characters. */
const VALID = /^[\x21-\x7e]{1,255}$/;

/**
 * A fresh key: 16 random bytes (128 bits) as base64url without padding, 22 characters of [A-Za-z0-9_-]. From the
 * platform's crypto.getRandomValues (every browser, secure context or not, and Node 19+); on a Node 18 without the
 * global Web Crypto, Math.random fills the bytes (a key only has to be unique among its principal's own keys).
 * @example
 * ```ts
 * const key = newIdempotencyKey(); // keep it (say, with the order) before calling
 * await flock.send(to, "order 17 shipped", {}, { idempotencyKey: key });
 * ```
 */
export function newIdempotencyKey(): string {
  const bytes = new Uint8Array(16);
  const c = (globalThis as { crypto?: { getRandomValues?: (a: Uint8Array) => Uint8Array } }).crypto;
  if (typeof c?.getRandomValues === "function") c.getRandomValues(bytes);
  else for (let i = 0; i < bytes.length; i++) bytes[i] = Math.floor(Math.random() * 256);
  let bin = "";
  for (const b of bytes) bin += String.fromCharCode(b);
  return btoa(bin).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
}

/**
 * True when `key` is a key the server accepts (1 to 255 visible ASCII characters, 0x21-0x7E).
 * @example
 * ```ts
 * isIdempotencyKey("order-17"); // true
 * isIdempotencyKey("has space"); // false
 * ```
 */
export function isIdempotencyKey(key: string): boolean {
  return VALID.test(key);
}

/** Raises a RangeError, before anything is sent, for a key the server would refuse with 400. */
export function checkIdempotencyKey(key: string): string {
  if (!isIdempotencyKey(key))
    throw new RangeError("an Idempotency-Key is 1 to 255 visible ASCII characters (0x21-0x7E), no spaces");
  return key;
}
