// Bearer tokens in Postgres (`tokens`, by the SHA-256 of the token: runtime/tokens.ts): the principal a token names
// with the token's scopes, a person's expiring `pt_` tokens, and the named tokens of /v1/tokens (an id, a name and
// scopes each; schema/tokens.ts). An agent's full token is written with the agent (runtime/accounts/agents-store.ts).
import type { Sql } from "./db/client.ts";
import { MAX_TOKENS_PER_PRINCIPAL, type Scope } from "../schema/tokens.ts";

/** A token's principal as the lookup reads it. */
export interface TokenPrincipalRow {
  id: string;
  kind: "agent" | "human";
  display_name: string;
  avatar_key: string | null;
  /** Null for a token that does not expire (an agent's). */
  expires_at: Date | null;
  /** A named token's id; null for a full token. */
  token_id: string | null;
  /** A named token's scopes; null for a full token (every scope). */
  scopes: string[] | null;
  last_used_at: Date | null;
  /** Whether its principal is suspended by a moderator (runtime/moderation/suspensions-store.ts). */
  suspended: boolean;
}

/**
 * The principal whose token hashes to `hash`, with the token's expiry and scopes and whether the principal is
 * suspended (one statement: a lookup is one round trip); undefined for an unknown token.
 */
export async function principalOfToken(sql: Sql, hash: Buffer): Promise<TokenPrincipalRow | undefined> {
  const [row] = await sql<TokenPrincipalRow[]>`
      select p.id, p.kind, p.display_name, p.avatar_key, t.expires_at, t.id as token_id, t.scopes, t.last_used_at,
        exists (select 1 from suspensions s where s.principal = p.id) as suspended
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

/** Notes that a named token was just looked up (runtime/auth.ts, at most once an hour a token). */
export async function touchToken(sql: Sql, hash: Buffer): Promise<void> {
  await sql`update tokens set last_used_at = now() where hash = ${hash}`;
}

/** A named token as GET /v1/tokens lists it. */
export interface NamedTokenRow {
  id: string;
  name: string;
  scopes: string[];
  created_at: Date;
  last_used_at: Date | null;
}

/**
 * Stores a named token of `principal`, unless it holds MAX_TOKENS_PER_PRINCIPAL already (then undefined). One
 * statement: the count and the insert see the same rows, under a lock on the principal's row, so two creates at once
 * cannot both pass at the bound.
 */
export async function saveNamedToken(
  sql: Sql,
  t: { hash: Buffer; id: string; principal: string; name: string; scopes: readonly Scope[] },
): Promise<NamedTokenRow | undefined> {
  return sql.begin(async (tx) => {
    await tx`select 1 from principals where id = ${t.principal} for update`;
    const [row] = await tx<NamedTokenRow[]>`
      insert into tokens (hash, principal, id, name, scopes)
      select ${t.hash}, ${t.principal}, ${t.id}, ${t.name}, ${t.scopes as string[]}::text[]
      where (select count(*) from tokens where principal = ${t.principal} and id is not null) < ${MAX_TOKENS_PER_PRINCIPAL}
      returning id, name, scopes, created_at, last_used_at`;
    return row;
  });
}

/** The principal's named tokens, oldest first (never their secrets: only hashes are stored). */
export async function namedTokens(sql: Sql, principal: string): Promise<NamedTokenRow[]> {
  return sql<NamedTokenRow[]>`
    select id, name, scopes, created_at, last_used_at from tokens
    where principal = ${principal} and id is not null order by created_at, id`;
}

/** One named token of the principal's, or undefined. */
export async function namedToken(sql: Sql, principal: string, id: string): Promise<NamedTokenRow | undefined> {
  const [row] = await sql<NamedTokenRow[]>`
    select id, name, scopes, created_at, last_used_at from tokens where principal = ${principal} and id = ${id}`;
  return row;
}

/** Deletes one named token of the principal's; false when it has none by that id. */
export async function deleteNamedToken(sql: Sql, principal: string, id: string): Promise<boolean> {
  const rows = await sql`delete from tokens where principal = ${principal} and id = ${id} returning 1`;
  return rows.length > 0;
}
