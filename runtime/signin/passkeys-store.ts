// Postgres side of passkeys (runtime/signin/passkeys.ts): the credentials people registered, and the challenges of
// ceremonies under way, each answerable once before it expires.
import type { TransactionSql } from "postgres";
import type { Sql } from "../db/client.ts";

type Db = Sql | TransactionSql;

export interface StoredPasskey {
  id: string;
  principal: string;
  public_key: Uint8Array;
  counter: string;
  transports: string[];
}

export interface PendingCeremony {
  challenge: string;
  purpose: "register" | "login";
  principal: string | null;
  new_user: boolean;
  display_name: string | null;
  expires_at: Date;
}

export async function saveChallenge(
  sql: Sql,
  c: {
    id: string;
    challenge: string;
    purpose: "register" | "login";
    principal?: string;
    newUser?: boolean;
    displayName?: string;
    expiresAt: Date;
    now: Date;
  },
): Promise<void> {
  // a signed-in person adding a passkey holds one challenge at a time: a new one replaces the one not yet answered
  // (so repeated calls cannot pile rows up); a sign-up's principal is a fresh id, so it replaces nothing
  await sql`
    with old as (
      delete from passkey_challenges
      where ${c.principal !== undefined && c.newUser !== true} and principal = ${c.principal ?? null} and purpose = 'register' and not new_user
    )
    insert into passkey_challenges (id, challenge, purpose, principal, new_user, display_name, expires_at)
    values (${c.id}, ${c.challenge}, ${c.purpose}, ${c.principal ?? null}, ${c.newUser ?? false}, ${c.displayName ?? null}, ${c.expiresAt})`;
  // housekeeping: ceremonies nobody finished, kept an hour past expiry so a late answer hears "expired"
  await sql`delete from passkey_challenges where expires_at < ${new Date(c.now.getTime() - 3_600_000)}`;
}

/** Takes the ceremony `id` (it can be answered once): what it was for, or undefined when unknown or used. */
export async function takeChallenge(sql: Sql, id: string): Promise<PendingCeremony | undefined> {
  const [row] = await sql<PendingCeremony[]>`
    delete from passkey_challenges where id = ${id}
    returning challenge, purpose, principal, new_user, display_name, expires_at`;
  return row;
}

export async function passkeyById(sql: Db, id: string): Promise<StoredPasskey | undefined> {
  const [row] = await sql<
    StoredPasskey[]
  >`select id, principal, public_key, counter::text as counter, transports from passkeys where id = ${id}`;
  return row;
}

export async function passkeysOf(
  sql: Sql,
  principal: string,
): Promise<{ id: string; transports: string[]; created_at: Date; last_used_at: Date | null }[]> {
  return sql`select id, transports, created_at, last_used_at from passkeys where principal = ${principal} order by created_at, id`;
}

/** Stores a new credential for `principal`; false when the credential id is taken already. */
export async function addPasskey(
  sql: Db,
  p: { id: string; principal: string; publicKey: Uint8Array; counter: number; transports: string[] },
): Promise<boolean> {
  const rows = await sql`
    insert into passkeys (id, principal, public_key, counter, transports)
    values (${p.id}, ${p.principal}, ${p.publicKey}, ${p.counter}, ${p.transports})
    on conflict (id) do nothing
    returning 1`;
  return rows.length > 0;
}

/**
 * A signature checked: its counter is kept when it moved forward (an authenticator that counts; 0 from one that does
 * not), so an older one replayed by a cloned authenticator is refused. False when the counter went back meanwhile.
 */
export async function usedPasskey(sql: Sql, id: string, counter: number, at: Date): Promise<boolean> {
  const rows = await sql`
    update passkeys set counter = greatest(counter, ${counter}), last_used_at = ${at}
    where id = ${id} and (${counter} = 0 or counter < ${counter})
    returning 1`;
  return rows.length > 0;
}

export async function removePasskey(
  sql: Sql,
  principal: string,
  id: string,
): Promise<"removed" | "not_found" | "last"> {
  return sql.begin(async (tx) => {
    // two removals at once (two devices) must not both see the other passkey and leave the person no way in: they
    // take the person's row in turn, and the second counts after the first is gone
    await tx`select 1 from principals where id = ${principal} for update`;
    const [row] = await tx<{ found: boolean; removed: boolean }[]>`
      with target as (select 1 from passkeys where principal = ${principal} and id = ${id}),
      ways as (
        select (select count(*) from wallets where principal = ${principal})
             + (select count(*) from identities where principal = ${principal})
             + (select count(*) from passkeys where principal = ${principal}) as n),
      del as (
        delete from passkeys where principal = ${principal} and id = ${id} and (select n from ways) > 1 returning 1)
      select exists (select 1 from target) as found, exists (select 1 from del) as removed`;
    return row?.removed ? "removed" : row?.found ? "last" : "not_found";
  });
}
