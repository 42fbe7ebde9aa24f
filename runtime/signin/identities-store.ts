// What a person signs in with, in Postgres: wallets (external ones that signed a challenge, embedded ones an identity
// provider vouches for) and identity-provider subjects, each naming its person; the advisory lock that serialises
// the sign-ins of one identity; and every identity of a person at once (their account's rate-limit scopes).
// Passkeys are passkeys-store.ts.
import type { TransactionSql } from "postgres";
import type { Sql } from "../db/client.ts";

/** Serialises sign-ins of one identity (`key`: a wallet or provider subject) across nodes for one transaction. */
export async function lockIdentity(tx: TransactionSql, key: string): Promise<void> {
  await tx`select pg_advisory_xact_lock(hashtextextended(${key}, 0))`;
}

/** The person the wallet `address` (lowercase) signs in as; undefined when it is no one's. */
export async function walletOwner(tx: TransactionSql, address: string): Promise<string | undefined> {
  const [found] = await tx<{ principal: string }[]>`select principal from wallets where address = ${address}`;
  return found?.principal;
}

/** Records the external wallet `address` (lowercase) of `principal`. */
export async function addExternalWallet(tx: TransactionSql, address: string, principal: string): Promise<void> {
  await tx`insert into wallets (address, principal, kind) values (${address}, ${principal}, 'external')`;
}

/** Records the embedded wallet `address` (lowercase) of `principal`, unless it is someone's already. */
export async function addEmbeddedWallet(tx: TransactionSql, address: string, principal: string): Promise<void> {
  await tx`insert into wallets (address, principal, kind) values (${address}, ${principal}, 'embedded') on conflict (address) do nothing`;
}

/** The person the identity-provider subject signs in as; undefined when it is no one's yet. */
export async function subjectOwner(tx: TransactionSql, provider: string, subject: string): Promise<string | undefined> {
  const [found] = await tx<{ principal: string }[]>`
      select principal from identities where provider = ${provider} and subject = ${subject}`;
  return found?.principal;
}

/** Of the wallets `addresses` (lowercase), the person owning the one recorded first; undefined when none is a person's. */
export async function firstPersonOwning(tx: TransactionSql, addresses: string[]): Promise<string | undefined> {
  if (addresses.length === 0) return undefined;
  const [owner] = await tx<{ principal: string }[]>`
      select w.principal from wallets w join principals p on p.id = w.principal
      where w.address = any(${addresses}) and p.kind = 'human' order by w.created_at limit 1`;
  return owner?.principal;
}

/** Records that the identity-provider subject signs in as `principal`. */
export async function addSubject(
  tx: TransactionSql,
  provider: string,
  subject: string,
  principal: string,
): Promise<void> {
  await tx`insert into identities (provider, subject, principal) values (${provider}, ${subject}, ${principal})`;
}

/**
 * Every identity `principal` signs in with, as a key each (`wallet:<address>`, `<provider>:<subject>`,
 * `passkey:<credential id>`), in no particular order.
 */
export async function identityKeys(sql: Sql, principal: string): Promise<string[]> {
  const rows = await sql<{ key: string }[]>`
    select 'wallet:' || address as key from wallets where principal = ${principal}
    union all
    select provider || ':' || subject from identities where principal = ${principal}
    union all
    select 'passkey:' || id from passkeys where principal = ${principal}`;
  return rows.map((r) => r.key);
}
