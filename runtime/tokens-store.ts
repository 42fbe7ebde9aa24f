// Bearer tokens in Postgres (`tokens`, by the SHA-256 of the token: runtime/tokens.ts): the principal a token names,
// and a person's expiring `pt_` tokens. An agent's tokens are written with the agent
// (runtime/accounts/agents-store.ts).
import type { Sql } from "./db/client.ts";

/** A token's principal as the lookup reads it. */
export interface TokenPrincipalRow {
  id: string;
  kind: "agent" | "human";
  display_name: string;
  avatar_key: string | null;
  /** Null for a token that does not expire (an agent's). */
  expires_at: Date | null;
}

/** The principal whose token hashes to `hash`, with the token's expiry; undefined for an unknown token. */
export async function principalOfToken(sql: Sql, hash: Buffer): Promise<TokenPrincipalRow | undefined> {
  const [row] = await sql<TokenPrincipalRow[]>`
      select p.id, p.kind, p.display_name, p.avatar_key, t.expires_at
      from tokens t join principals p on p.id = t.principal
      where t.hash = ${hash}`;
  return row;
}

/**
 * Stores a token of `principal` that expires at `expiresAt`, then sweeps that principal's tokens that expired before
 * `sweepBefore` (so expired tokens do not pile up).
 */
export async function saveExpiringToken(
  sql: Sql,
  hash: Buffer,
  principal: string,
  expiresAt: Date,
  sweepBefore: Date,
): Promise<void> {
  await sql`insert into tokens (hash, principal, expires_at) values (${hash}, ${principal}, ${expiresAt})`;
  await sql`delete from tokens where principal = ${principal} and expires_at < ${sweepBefore}`;
}
