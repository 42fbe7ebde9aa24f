// Human users: find or create the user behind a wallet or an identity-provider subject, issue `pt_` tokens,
// and read and update the own profile. Humans are principals of kind 'human' with id `P` + digits.
import { getAddress } from "./address.ts";
import type postgres from "postgres";
import type { MessagePolicy, User, Wallet } from "../schema/users.ts";
import { avatarPath } from "./accounts/avatar-path.ts";
import { avatarColumns, type AvatarChange } from "./accounts/avatars-store.ts";
import type { Sql } from "./db/client.ts";
import type { Services } from "./services.ts";
import { hashToken, newToken } from "./tokens.ts";

type Db = Sql | postgres.TransactionSql;

interface UserRow {
  id: string;
  display_name: string;
  avatar_key: string | null;
  description: string;
  accepts_messages_from: MessagePolicy;
  read_receipts: boolean;
  created_at: Date;
}

export async function loadUser(sql: Db, id: string): Promise<User | null> {
  const [row] = await sql<UserRow[]>`
    select id, display_name, avatar_key, description, accepts_messages_from, read_receipts, created_at from principals where id = ${id} and kind = 'human'`;
  if (!row) return null;
  const wallets = await sql<Wallet[]>`
    select address, kind from wallets where principal = ${id} order by created_at, address`;
  return {
    id: row.id,
    display_name: row.display_name,
    avatar_url: avatarPath(row.avatar_key),
    description: row.description,
    wallets: wallets.map((w) => ({ address: w.address, kind: w.kind })),
    accepts_messages_from: row.accepts_messages_from,
    read_receipts: row.read_receipts,
    created_at: row.created_at.toISOString(),
  };
}

/** What PATCH /v1/users/me may change. */
interface UserChange {
  display_name?: string;
  description?: string;
  accepts_messages_from?: MessagePolicy;
  read_receipts?: boolean;
  avatar?: AvatarChange | undefined;
}

/** Changes the given fields of a human's profile; false when there is no such human. */
export async function updateUser(sql: Db, id: string, change: UserChange): Promise<boolean> {
  const rows = await sql`
    update principals set
      display_name = coalesce(${change.display_name ?? null}::text, display_name),
      description = coalesce(${change.description ?? null}::text, description),
      accepts_messages_from = coalesce(${change.accepts_messages_from ?? null}::text, accepts_messages_from),
      read_receipts = coalesce(${change.read_receipts ?? null}::boolean, read_receipts),
      ${avatarColumns(sql, change.avatar)}
      updated_at = now()
    where id = ${id} and kind = 'human'
    returning id`;
  return rows.length > 0;
}

/** `0xAbCd…1234`: the default display name of a user who signed in with a wallet. */
function shortAddress(address: string): string {
  const cs = getAddress(address);
  return `${cs.slice(0, 6)}…${cs.slice(-4)}`;
}

/** Serialises sign-ins of one identity (wallet or provider subject) across nodes for one transaction. */
async function lockIdentity(tx: postgres.TransactionSql, key: string): Promise<void> {
  await tx`select pg_advisory_xact_lock(hashtextextended(${key}, 0))`;
}

async function createHuman(
  tx: postgres.TransactionSql,
  svc: Services,
  displayName: string,
  id = svc.ids.next("human"),
): Promise<string> {
  await tx`insert into principals (id, kind, display_name) values (${id}, 'human', ${displayName})`;
  // A friend request to a person is stored whoever the id is (handlers/friends.ts): one sent to this id before it
  // was anyone's is not for this person.
  await tx`delete from friend_requests where to_id = ${id}`;
  return id;
}

/** The user an external wallet signs in as; created (with that wallet) on its first sign-in. */
export async function userForWallet(svc: Services, address: string): Promise<string> {
  const addr = address.toLowerCase();
  return svc.sql.begin(async (tx) => {
    await lockIdentity(tx, `wallet:${addr}`);
    const [found] = await tx<{ principal: string }[]>`select principal from wallets where address = ${addr}`;
    if (found) return found.principal;
    const id = await createHuman(tx, svc, shortAddress(addr));
    await tx`insert into wallets (address, principal, kind) values (${addr}, ${id}, 'external')`;
    return id;
  });
}

/**
 * Adds an external wallet that signed a challenge to a person (one who signed up with a passkey, or a second wallet):
 * it then signs in as that person. `taken` when it already signs in as someone else (nothing changes).
 */
export async function linkWallet(
  svc: Services,
  principal: string,
  address: string,
): Promise<"linked" | "already" | "taken"> {
  const addr = address.toLowerCase();
  return svc.sql.begin(async (tx) => {
    await lockIdentity(tx, `wallet:${addr}`);
    const [found] = await tx<{ principal: string }[]>`select principal from wallets where address = ${addr}`;
    if (found) return found.principal === principal ? "already" : "taken";
    await tx`insert into wallets (address, principal, kind) values (${addr}, ${principal}, 'external')`;
    return "linked";
  });
}

/**
 * The user an identity-provider subject signs in as. A new subject joins the user that already owns one of the
 * embedded wallets the provider vouches for, or else a new user. Embedded wallets are recorded when free.
 */
export async function userForIdentity(
  svc: Services,
  provider: string,
  subject: string,
  embeddedWallets: string[],
  displayName: string,
): Promise<string> {
  const wallets = [...new Set(embeddedWallets.map((w) => w.toLowerCase()))];
  return svc.sql.begin(async (tx) => {
    await lockIdentity(tx, `id:${provider}:${subject}`);
    const [found] = await tx<{ principal: string }[]>`
      select principal from identities where provider = ${provider} and subject = ${subject}`;
    let id = found?.principal;
    if (!id) {
      const [owner] =
        wallets.length > 0
          ? await tx<{ principal: string }[]>`
              select w.principal from wallets w join principals p on p.id = w.principal
              where w.address = any(${wallets}) and p.kind = 'human' order by w.created_at limit 1`
          : [];
      id = owner?.principal ?? (await createHuman(tx, svc, displayName));
      await tx`insert into identities (provider, subject, principal) values (${provider}, ${subject}, ${id})`;
    }
    for (const w of wallets) {
      await tx`insert into wallets (address, principal, kind) values (${w}, ${id}, 'embedded') on conflict (address) do nothing`;
    }
    return id;
  });
}

/**
 * A person signing up with a passkey: created under the id the ceremony reserved (`id`), with the credential, in one
 * transaction. False when the credential id is taken already (nothing is created).
 */
export async function userForNewPasskey(
  svc: Services,
  id: string,
  displayName: string,
  passkey: { id: string; publicKey: Uint8Array; counter: number; transports: string[] },
): Promise<boolean> {
  return svc.sql.begin(async (tx) => {
    const [taken] = await tx`select 1 from passkeys where id = ${passkey.id}`;
    if (taken) return false;
    await createHuman(tx, svc, displayName, id);
    await tx`
      insert into passkeys (id, principal, public_key, counter, transports)
      values (${passkey.id}, ${id}, ${passkey.publicKey}, ${passkey.counter}, ${passkey.transports})`;
    return true;
  });
}

interface IssuedToken {
  token: string;
  expiresAt: Date;
}

/** A fresh `pt_` token for a human, expiring after HUMAN_TOKEN_TTL; the user's long-expired tokens are swept. */
async function issueHumanToken(svc: Services, principalId: string): Promise<IssuedToken> {
  const token = newToken("human");
  const now = svc.now();
  const expiresAt = new Date(now + svc.config.HUMAN_TOKEN_TTL * 1000);
  await svc.sql`insert into tokens (hash, principal, expires_at) values (${hashToken(token)}, ${principalId}, ${expiresAt})`;
  await svc.sql`delete from tokens where principal = ${principalId} and expires_at < ${new Date(now - 86_400_000)}`;
  return { token, expiresAt };
}

/** What both sign-in paths answer. */
export async function loginAnswer(svc: Services, principalId: string) {
  const { token, expiresAt } = await issueHumanToken(svc, principalId);
  const user = await loadUser(svc.sql, principalId);
  if (!user) throw new Error(`human ${principalId} vanished during sign-in`);
  return { user, token, expires_at: expiresAt.toISOString() };
}
