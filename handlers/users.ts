// Human users: read and update the own profile; delete the own account (humans and agents alike).
import type { Hex } from "viem";
import { conflict, notFound } from "../runtime/errors.ts";
import { defineRoute, noContent, ok, type Route } from "../runtime/http/route.ts";
import { avatarChange } from "../runtime/accounts/avatars-store.ts";
import { deleteAccount } from "../runtime/accounts/delete.ts";
import { loadUser, updateUser } from "../runtime/accounts/humans-store.ts";
import { linkWallet } from "../runtime/signin/humans.ts";
import { issueChallenge, verifyChallenge } from "../runtime/signin/wallet.ts";
import { registrationOptions } from "../runtime/signin/passkeys.ts";
import { passkeysOf, removePasskey } from "../runtime/signin/passkeys-store.ts";
import { WalletVerifyRequest } from "../schema/auth.ts";
import { UpdateUserRequest } from "../schema/users.ts";

const me = defineRoute({
  method: "GET",
  path: "/v1/users/me",
  auth: "human",
  scope: "read",
  async handle({ principal, svc }) {
    const user = await loadUser(svc.sql, principal.id);
    if (!user) throw notFound("user");
    return ok({ user });
  },
});

const update = defineRoute({
  method: "PATCH",
  path: "/v1/users/me",
  auth: "human",
  scope: "full",
  body: UpdateUserRequest,
  async handle({ principal, body, svc }) {
    const avatar = await avatarChange(svc.sql, principal.id, body.avatar);
    if (!(await updateUser(svc.sql, principal.id, { ...body, avatar }))) throw notFound("user");
    if (body.display_name !== undefined || avatar) await svc.auth.forget(principal.id);
    const user = await loadUser(svc.sql, principal.id);
    if (!user) throw notFound("user");
    return ok({ user });
  },
});

/** Irreversible. At most once per 24 hours per account, counted against the account's stable identities. */
const remove = defineRoute({
  method: "DELETE",
  path: "/v1/users/me",
  auth: "principal",
  scope: "full",
  async handle(ctx) {
    await deleteAccount(ctx.svc, ctx.principal, ctx.ip, ctx.replyHeaders, ctx.log);
    return noContent();
  },
});

/**
 * Options to add a passkey to the signed-in person; the answer goes to POST /v1/auth/passkey/register. Limited, and
 * each call replaces the person's challenge not yet answered (runtime/signin/passkeys-store.ts, saveChallenge).
 */
const passkeyOptions = defineRoute({
  method: "POST",
  path: "/v1/users/me/passkeys/options",
  auth: "human",
  scope: "full",
  limit: "passkey_add",
  async handle({ principal, svc }) {
    return ok(
      await registrationOptions(svc, { principal: principal.id, displayName: principal.displayName, newUser: false }),
    );
  },
});

const passkeys = defineRoute({
  method: "GET",
  path: "/v1/users/me/passkeys",
  auth: "human",
  scope: "read",
  async handle({ principal, svc }) {
    const rows = await passkeysOf(svc.sql, principal.id);
    return ok({
      passkeys: rows.map((p) => ({
        id: p.id,
        created_at: p.created_at.toISOString(),
        last_used_at: p.last_used_at?.toISOString() ?? null,
      })),
    });
  },
});

/** Removes one of the person's passkeys; not the last way they have to sign in (409). */
const removePasskeyRoute = defineRoute({
  method: "DELETE",
  path: "/v1/users/me/passkeys/:id",
  auth: "human",
  scope: "full",
  async handle({ params, principal, svc }) {
    const out = await removePasskey(svc.sql, principal.id, params["id"] ?? "");
    if (out === "not_found") throw notFound("passkey");
    if (out === "last") throw conflict("this passkey is your only way to sign in: add another first");
    return noContent();
  },
});

/**
 * Adds a wallet to the signed-in person, in the two steps of wallet sign-in: `{address}` gives the message to sign,
 * `{message, signature}` adds the wallet that signed it. The wallet then signs in as this person. 409 when it signs
 * in as someone else already.
 */
const addWallet = defineRoute({
  method: "POST",
  path: "/v1/users/me/wallets",
  auth: "human",
  scope: "payments",
  body: WalletVerifyRequest,
  limit: "wallet_verify",
  async handle({ principal, body, svc }) {
    if (body.address !== undefined) return ok(await issueChallenge(svc, body.address));
    const address = await verifyChallenge(svc, body.message!, body.signature! as Hex);
    if ((await linkWallet(svc, principal.id, address)) === "taken")
      throw conflict("this wallet signs in as another person already");
    const user = await loadUser(svc.sql, principal.id);
    if (!user) throw notFound("user");
    return ok({ user });
  },
});

export const userRoutes: Route[] = [me, update, remove, passkeyOptions, passkeys, removePasskeyRoute, addWallet];
