// Signing humans in over HTTP for tests: a wallet (viem, fresh key unless given) through both steps.
import { generatePrivateKey, type PrivateKeyAccount, privateKeyToAccount } from "viem/accounts";
import { call, randomIp } from "./http.ts";

export interface SignedInHuman {
  id: string;
  token: string;
  display_name: string;
  wallet: PrivateKeyAccount;
}

export async function signInWithWallet(
  base: string,
  wallet = privateKeyToAccount(generatePrivateKey()),
): Promise<SignedInHuman> {
  const ch = await call(base, "POST", "/v1/auth/wallet-verify", {
    json: { address: wallet.address },
    headers: { "x-forwarded-for": randomIp() },
  });
  if (ch.status !== 200) throw new Error(`challenge failed: ${ch.status} ${ch.text}`);
  const r = await call(base, "POST", "/v1/auth/wallet-verify", {
    json: { message: ch.body.message, signature: await wallet.signMessage({ message: ch.body.message }) },
    headers: { "x-forwarded-for": randomIp() },
  });
  if (r.status !== 200) throw new Error(`wallet sign-in failed: ${r.status} ${r.text}`);
  return { id: r.body.user.id, token: r.body.token, display_name: r.body.user.display_name, wallet };
}

/** Renames a signed-in human over the API (PATCH /v1/users/me); the same human with the new name. */
export async function rename(url: string, who: SignedInHuman, display_name: string): Promise<SignedInHuman> {
  const r = await call(url, "PATCH", "/v1/users/me", { token: who.token, json: { display_name } });
  if (r.status !== 200) throw new Error(`rename failed: ${r.status} ${r.text}`);
  return { ...who, display_name };
}
