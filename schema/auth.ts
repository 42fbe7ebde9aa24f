// Human sign-in: the two steps of wallet sign-in (EIP-4361) and the identity-provider login.
import { z } from "zod";
import { isAddress } from "./address.ts";
import { displayName } from "./common.ts";
import { User, UserResponse } from "./users.ts";

const address = z
  .string()
  .regex(/^0x[0-9a-fA-F]{40}$/, { message: "must be a 0x-prefixed 20-byte hex address", abort: true })
  .refine((a) => isAddress(a), "mixed-case address with a bad EIP-55 checksum");

/**
 * One endpoint, two steps: `{address}` asks for a challenge; `{message, signature}` answers it.
 * Sending both shapes at once, or neither, is refused.
 */
export const WalletVerifyRequest = z
  .object({
    address: address.optional(),
    message: z.string().min(1).max(8192).optional(),
    signature: z
      .string()
      .regex(/^0x[0-9a-fA-F]+$/, "must be 0x-prefixed hex")
      .max(32_768)
      .optional(),
  })
  .strict()
  .superRefine((v, ctx) => {
    if (v.address !== undefined) {
      if (v.message !== undefined || v.signature !== undefined) {
        ctx.addIssue({ code: "custom", path: ["address"], message: "send either {address} or {message, signature}" });
      }
      return;
    }
    if (v.message === undefined)
      ctx.addIssue({ code: "custom", path: ["message"], message: "required (or send {address})" });
    if (v.signature === undefined) ctx.addIssue({ code: "custom", path: ["signature"], message: "required" });
  });
export type WalletVerifyRequest = z.infer<typeof WalletVerifyRequest>;

/** Step one's answer: the EIP-4361 message to sign, naming the nonce. */
export const WalletChallenge = z.object({
  nonce: z.string(),
  message: z.string(),
  expires_at: z.string(),
});

export const PrivyLoginRequest = z.object({ token: z.string().min(1).max(16_384) }).strict();

/** What a successful sign-in answers (both paths). */
export const LoginResponse = z.object({
  user: User,
  token: z.string().startsWith("pt_"),
  expires_at: z.string(),
});

/** POST /v1/auth/wallet-verify answers step one with a challenge and step two with the sign-in. */
export const WalletVerifyResponse = z.union([WalletChallenge, LoginResponse]);

/** POST /v1/users/me/wallets answers step one with a challenge and step two with the profile, the wallet in it. */
export const AddWalletResponse = z.union([WalletChallenge, UserResponse]);

/** POST /v1/auth/passkey/register-options: sign up with a passkey, as a new person with this name. */
export const PasskeySignUpRequest = z.object({ display_name: displayName(64).optional() }).strict();

/**
 * A ceremony's first step: `options` for the browser's `navigator.credentials.create()` or `.get()` (WebAuthn's
 * JSON form, as @simplewebauthn/browser takes it), and the id to answer with, within 5 minutes.
 */
export const PasskeyOptions = z.object({
  challenge_id: z.string(),
  options: z.record(z.string(), z.unknown()),
  expires_at: z.string(),
});

/** A ceremony's second step: the authenticator's answer (WebAuthn's JSON form of the credential). */
export const PasskeyAnswer = z
  .object({
    challenge_id: z.string().min(1).max(64),
    response: z
      .object({
        id: z
          .string()
          .min(1)
          .max(1024)
          .regex(/^[A-Za-z0-9_-]+$/, "must be base64url"),
        rawId: z
          .string()
          .max(1024)
          .regex(/^[A-Za-z0-9_-]*$/, "must be base64url"),
        type: z.literal("public-key"),
        response: z.record(z.string(), z.unknown()),
      })
      .passthrough(),
  })
  .strict();

/** A passkey of the signed-in person (its credential id; never its key). */
export const Passkey = z.object({ id: z.string(), created_at: z.string(), last_used_at: z.string().nullable() });
export const PasskeysResponse = z.object({ passkeys: z.array(Passkey) });
