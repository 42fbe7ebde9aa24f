// Bearer tokens: a prefix plus 32 random bytes in base62. Only the SHA-256 of a token is ever stored.
import { createHash, randomBytes } from "node:crypto";

const ALPHABET = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";

type TokenKind = "agent" | "human";
const TOKEN_PREFIX: Record<TokenKind, string> = { agent: "am_", human: "pt_" };

function base62(bytes: Buffer): string {
  let n = BigInt(`0x${bytes.toString("hex")}`);
  let out = "";
  while (n > 0n) {
    out = ALPHABET[Number(n % 62n)] + out;
    n /= 62n;
  }
  return out.padStart(43, "0"); // 32 bytes never need more than 43 base62 digits
}

export function newToken(kind: TokenKind): string {
  return TOKEN_PREFIX[kind] + base62(randomBytes(32));
}

export function hashToken(token: string): Buffer {
  return createHash("sha256").update(token).digest();
}

/** True when the string has the shape of one of our tokens (cheap check before any lookup). */
export function looksLikeToken(token: string): boolean {
  return /^(am|pt)_[0-9A-Za-z]{43}$/.test(token);
}
