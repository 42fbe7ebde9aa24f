// How a person signs in: find or create the person behind a wallet, an identity-provider subject or a new passkey,
// link another wallet, and issue `pt_` tokens. Each sign-in of one identity runs in one transaction under that
// identity's lock, so two at once (two nodes) make one person. The statements: identities-store.ts,
// passkeys-store.ts, runtime/accounts/humans-store.ts and runtime/tokens-store.ts.
import type { TransactionSql } from "postgres";
import { getAddress } from "../address.ts";
import { insertHuman, loadUser } from "../accounts/humans-store.ts";
import type { Services } from "../services.ts";
import { dropRequestsTo } from "../social/friends-store.ts";
import { hashToken, newToken } from "../tokens.ts";
import { saveExpiringToken } from "../tokens-store.ts";
import {
  addEmbeddedWallet,
  addExternalWallet,
  addSubject,
  firstPersonOwning,
  lockIdentity,
  subjectOwner,
  walletOwner,
} from "./identities-store.ts";
import { addPasskey, passkeyById } from "./passkeys-store.ts";

/** `0xAbCd…1234`: the default display name of a user who signed in with a wallet. */
function shortAddress(address: string): string {
  const cs = getAddress(address);
  return `${cs.slice(0, 6)}…${cs.slice(-4)}`;
}

async function createHuman(
  tx: TransactionSql,
  svc: Services,
  displayName: string,
  id = svc.ids.next("human"),
): Promise<string> {
  await insertHuman(tx, id, displayName);
  // A friend request to a person is stored whoever the id is (handlers/friends.ts): one sent to this id before it
  // was anyone's is not for this person.
  await dropRequestsTo(tx, id);
  return id;
}

/** The user an external wallet signs in as; created (with that wallet) on its first sign-in. */
export async function userForWallet(svc: Services, address: string): Promise<string> {
  const addr = address.toLowerCase();
  return svc.sql.begin(async (tx) => {
    await lockIdentity(tx, `wallet:${addr}`);
    const found = await walletOwner(tx, addr);
    if (found) return found;
    const id = await createHuman(tx, svc, shortAddress(addr));
    await addExternalWallet(tx, addr, id);
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
    const found = await walletOwner(tx, addr);
    if (found) return found === principal ? "already" : "taken";
    await addExternalWallet(tx, addr, principal);
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
    let id = await subjectOwner(tx, provider, subject);
    if (!id) {
      id = (await firstPersonOwning(tx, wallets)) ?? (await createHuman(tx, svc, displayName));
      await addSubject(tx, provider, subject, id);
    }
    for (const w of wallets) await addEmbeddedWallet(tx, w, id);
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
    if (await passkeyById(tx, passkey.id)) return false;
    await createHuman(tx, svc, displayName, id);
    // taken between the two statements (a sign-up with the same credential at once): the person is rolled back
    if (!(await addPasskey(tx, { ...passkey, principal: id })))
      throw new Error(`passkey ${passkey.id} was registered by another sign-up meanwhile`);
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
  await saveExpiringToken(svc.sql, hashToken(token), principalId, expiresAt, new Date(now - 86_400_000));
  return { token, expiresAt };
}

/** What both sign-in paths answer. */
export async function loginAnswer(svc: Services, principalId: string) {
  const { token, expiresAt } = await issueHumanToken(svc, principalId);
  const user = await loadUser(svc.sql, principalId);
  if (!user) throw new Error(`human ${principalId} vanished during sign-in`);
  return { user, token, expires_at: expiresAt.toISOString() };
}
