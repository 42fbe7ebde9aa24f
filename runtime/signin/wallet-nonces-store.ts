// The nonces of wallet sign-in (runtime/signin/wallet.ts) in Postgres: each handed out for one address, answerable
// once before it expires.
import type { Sql } from "../db/client.ts";

/** A nonce handed out and not yet used. */
export interface PendingNonce {
  /** The address (lowercase) it was handed out for. */
  address: string;
  expires_at: Date;
}

/**
 * Stores a nonce for `address` (lowercase) until `expiresAt`, then sweeps the nonces nobody used that expired
 * before `sweepBefore`.
 */
export async function saveNonce(
  sql: Sql,
  nonce: string,
  address: string,
  expiresAt: Date,
  sweepBefore: Date,
): Promise<void> {
  await sql`insert into wallet_nonces (nonce, address, expires_at) values (${nonce}, ${address}, ${expiresAt})`;
  await sql`delete from wallet_nonces where expires_at < ${sweepBefore}`;
}

/** The nonce as it was handed out; undefined when unknown or used. */
export async function pendingNonce(sql: Sql, nonce: string): Promise<PendingNonce | undefined> {
  const [pending] = await sql<PendingNonce[]>`
    select address, expires_at from wallet_nonces where nonce = ${nonce}`;
  return pending;
}

/** Uses the nonce up if it is still unexpired at `now`: of two concurrent answers with it, one wins (true). */
export async function consumeNonce(sql: Sql, nonce: string, now: Date): Promise<boolean> {
  const used = await sql`delete from wallet_nonces where nonce = ${nonce} and expires_at > ${now} returning 1`;
  return used.length > 0;
}
