// Human sign-in: wallet (EIP-4361, two steps on one endpoint) and the identity provider. Both answer
// {user, token: "pt_...", expires_at} and create the user on first sign-in.
import type { Hex } from "viem";
import { defineRoute, ok, type Route } from "../runtime/http/route.ts";
import { loginAnswer, userForIdentity, userForWallet } from "../runtime/humans.ts";
import { verifyProviderToken } from "../runtime/signin/privy.ts";
import { issueChallenge, verifyChallenge } from "../runtime/signin/wallet.ts";
import { PrivyLoginRequest, WalletVerifyRequest } from "../schema/auth.ts";

/** Provider name under which identity-provider subjects are stored. */
const PROVIDER = "privy";

const walletVerify = defineRoute({
  method: "POST",
  path: "/v1/auth/wallet-verify",
  auth: "none",
  body: WalletVerifyRequest,
  limit: "wallet_verify",
  async handle({ body, svc }) {
    if (body.address !== undefined) return ok(await issueChallenge(svc, body.address));
    const address = await verifyChallenge(svc, body.message!, body.signature! as Hex);
    const id = await userForWallet(svc, address);
    return ok(await loginAnswer(svc, id));
  },
});

const privyLogin = defineRoute({
  method: "POST",
  path: "/v1/auth/privy-login",
  auth: "none",
  body: PrivyLoginRequest,
  limit: "privy_login",
  async handle({ body, svc, log }) {
    const login = await verifyProviderToken(svc.config, svc.providerKeys, body.token, svc.now(), log);
    const id = await userForIdentity(svc, PROVIDER, login.subject, login.embeddedWallets, "New user");
    return ok(await loginAnswer(svc, id));
  },
});

export const authRoutes: Route[] = [walletVerify, privyLogin];
