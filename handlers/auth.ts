// Human sign-in: wallet (EIP-4361, two steps on one endpoint), the identity provider, and passkeys (WebAuthn, two
// steps each for sign-up and sign-in). All answer {user, token: "pt_...", expires_at} and create the user on first
// sign-in.
import type { Hex } from "viem";
import { defineRoute, ok, type Route } from "../runtime/http/route.ts";
import { loginAnswer, userForIdentity, userForWallet } from "../runtime/signin/humans.ts";
import { verifyProviderToken } from "../runtime/signin/privy.ts";
import { finishLogin, finishRegistration, loginOptions, registrationOptions } from "../runtime/signin/passkeys.ts";
import { issueChallenge, verifyChallenge } from "../runtime/signin/wallet.ts";
import { PasskeyAnswer, PasskeySignUpRequest, PrivyLoginRequest, WalletVerifyRequest } from "../schema/auth.ts";

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

/** Sign-up with a passkey, step one: options for a new person (the id they will get is reserved now). */
const passkeyRegisterOptions = defineRoute({
  method: "POST",
  path: "/v1/auth/passkey/register-options",
  auth: "none",
  body: PasskeySignUpRequest,
  limit: "passkey",
  async handle({ body, svc }) {
    return ok(
      await registrationOptions(svc, {
        principal: svc.ids.next("human"),
        displayName: body.display_name ?? "New user",
        newUser: true,
      }),
    );
  },
});

/**
 * Step two of a passkey's registration, for sign-up (the person is created) or for a signed-in person adding one
 * (POST /v1/users/me/passkeys/options made the options): the sign-in answer.
 */
const passkeyRegister = defineRoute({
  method: "POST",
  path: "/v1/auth/passkey/register",
  auth: "none",
  body: PasskeyAnswer,
  limit: "passkey",
  async handle({ body, svc }) {
    const id = await finishRegistration(svc, body);
    return ok(await loginAnswer(svc, id));
  },
});

const passkeyLoginOptions = defineRoute({
  method: "POST",
  path: "/v1/auth/passkey/login-options",
  auth: "none",
  limit: "passkey",
  async handle({ svc }) {
    return ok(await loginOptions(svc));
  },
});

const passkeyLogin = defineRoute({
  method: "POST",
  path: "/v1/auth/passkey/login",
  auth: "none",
  body: PasskeyAnswer,
  limit: "passkey",
  async handle({ body, svc }) {
    const id = await finishLogin(svc, body);
    return ok(await loginAnswer(svc, id));
  },
});

export const authRoutes: Route[] = [
  walletVerify,
  privyLogin,
  passkeyRegisterOptions,
  passkeyRegister,
  passkeyLoginOptions,
  passkeyLogin,
];
