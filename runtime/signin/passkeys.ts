// Passkey sign-up, sign-in, and a passkey added to a signed-in person (WebAuthn, with @simplewebauthn/server). Each
// ceremony is two steps: options with a fresh challenge (kept in Postgres for 5 minutes, answerable once), then the
// authenticator's answer, checked against that challenge, this deployment's relying party (FLOCK_DOMAIN) and an
// origin it serves. The library is imported by the first ceremony, not by every node at start (as viem is for
// wallets: bench/RESULTS.md, "Idle memory (issue 30)").
import { randomBytes } from "node:crypto";
import type { Config } from "../config.ts";
import { ApiError, conflict, unauthorized } from "../errors.ts";
import { userForNewPasskey } from "./humans.ts";
import type { Services } from "../services.ts";
import { checkAssertion, checkAttestation, clientData, malformedAnswer } from "./passkey-answer.ts";
import { addPasskey, passkeyById, passkeysOf, saveChallenge, takeChallenge, usedPasskey } from "./passkeys-store.ts";

/** How long a ceremony's challenge may be answered. */
const CEREMONY_TTL_MS = 5 * 60_000;
const RP_NAME = "Flock";

export interface Ceremony {
  challenge_id: string;
  options: Record<string, unknown>;
  expires_at: string;
}

/** The authenticator's answer, as the browser gives it (WebAuthn's JSON form). */
export interface PasskeyAnswer {
  challenge_id: string;
  response: { id: string; rawId: string; type: "public-key"; response: Record<string, unknown> } & Record<
    string,
    unknown
  >;
}

/**
 * Whether a ceremony may come from `origin`: the origin of FLOCK_PUBLIC_URL, `https://<FLOCK_DOMAIN>`, and, where the
 * domain is `localhost` (development and tests), `http(s)://localhost` on any port, which browsers treat as secure.
 */
export function originAllowed(config: Pick<Config, "FLOCK_DOMAIN" | "FLOCK_PUBLIC_URL">, origin: string): boolean {
  let url: URL;
  try {
    url = new URL(origin);
  } catch {
    return false;
  }
  if (url.origin !== origin) return false;
  if (config.FLOCK_PUBLIC_URL && new URL(config.FLOCK_PUBLIC_URL).origin === origin) return true;
  if (origin === `https://${config.FLOCK_DOMAIN}`) return true;
  return (
    config.FLOCK_DOMAIN === "localhost" &&
    url.hostname === "localhost" &&
    (url.protocol === "http:" || url.protocol === "https:")
  );
}

/** The origin the browser wrote into the answer's client data, checked against originAllowed; 401 otherwise (400 unreadable). */
function answerOrigin(config: Config, answer: PasskeyAnswer): string {
  const { origin } = clientData(answer.response.response);
  if (!originAllowed(config, origin)) {
    throw unauthorized(
      `the passkey was used on an origin this server does not serve (${JSON.stringify(origin.slice(0, 200))})`,
    );
  }
  return origin;
}

/**
 * The library refused an answer whose shape we checked: a 401 in our own words (its message, which on bad input tells
 * its internals, goes to the log only); a TypeError or RangeError is input it could not read, a 400.
 */
function refused(svc: Services, err: unknown, sentence: string): ApiError {
  svc.log.info({ reason: err instanceof Error ? err.message : String(err) }, "passkey answer refused");
  if (err instanceof TypeError || err instanceof RangeError) return malformedAnswer("it could not be read");
  return unauthorized(sentence);
}

async function ceremony(
  svc: Services,
  purpose: "register" | "login",
  options: { challenge: string } & object,
  extra: { principal?: string; newUser?: boolean; displayName?: string } = {},
): Promise<Ceremony> {
  const now = new Date(svc.now());
  const expiresAt = new Date(now.getTime() + CEREMONY_TTL_MS);
  const id = randomBytes(18).toString("base64url");
  await saveChallenge(svc.sql, { id, challenge: options.challenge, purpose, ...extra, expiresAt, now });
  return { challenge_id: id, options: options as Record<string, unknown>, expires_at: expiresAt.toISOString() };
}

/** Takes the ceremony answered (once); 401 when it is unknown, used, expired or of the other kind. */
async function taken(svc: Services, answer: PasskeyAnswer, purpose: "register" | "login") {
  const c = await takeChallenge(svc.sql, answer.challenge_id);
  if (!c || c.purpose !== purpose) throw unauthorized("unknown or already used challenge_id; ask for new options");
  if (c.expires_at.getTime() <= svc.now()) throw unauthorized("the passkey challenge expired; ask for new options");
  return c;
}

/**
 * Options to register a passkey: for a new person named `displayName` (sign-up: the id they will get is reserved
 * now), or for the signed-in person `principal` (their passkeys so far are excluded, so one authenticator is not
 * registered twice).
 */
export async function registrationOptions(
  svc: Services,
  who: { principal: string; displayName: string; newUser: boolean },
): Promise<Ceremony> {
  const { generateRegistrationOptions } = await import("@simplewebauthn/server");
  const existing = who.newUser ? [] : await passkeysOf(svc.sql, who.principal);
  const options = await generateRegistrationOptions({
    rpName: RP_NAME,
    rpID: svc.config.FLOCK_DOMAIN,
    userName: who.principal,
    userID: new TextEncoder().encode(who.principal),
    userDisplayName: who.displayName,
    attestationType: "none",
    excludeCredentials: existing.map((p) => ({ id: p.id, transports: p.transports as never })),
    authenticatorSelection: { residentKey: "required", userVerification: "preferred" },
    timeout: CEREMONY_TTL_MS,
  });
  return ceremony(svc, "register", options, {
    principal: who.principal,
    newUser: who.newUser,
    displayName: who.displayName,
  });
}

/** Checks a registration's answer and stores the passkey (creating the person on sign-up); the person's id. */
export async function finishRegistration(svc: Services, answer: PasskeyAnswer): Promise<string> {
  const origin = answerOrigin(svc.config, answer);
  await checkAttestation(answer.response.response);
  const c = await taken(svc, answer, "register");
  const { verifyRegistrationResponse } = await import("@simplewebauthn/server");
  let info;
  try {
    const v = await verifyRegistrationResponse({
      response: answer.response as never,
      expectedChallenge: c.challenge,
      expectedOrigin: origin,
      expectedRPID: svc.config.FLOCK_DOMAIN,
      requireUserVerification: false,
    });
    if (!v.verified || !v.registrationInfo) throw new Error("not verified");
    info = v.registrationInfo;
  } catch (err) {
    throw refused(
      svc,
      err,
      "the passkey could not be registered: its answer does not verify against the challenge and this server",
    );
  }
  const passkey = {
    id: info.credential.id,
    publicKey: info.credential.publicKey,
    counter: info.credential.counter,
    transports: (info.credential.transports ?? []) as string[],
  };
  const principal = c.principal!;
  const stored = c.new_user
    ? await userForNewPasskey(svc, principal, c.display_name ?? "New user", passkey)
    : await addPasskey(svc.sql, { ...passkey, principal }).catch((err: unknown) => {
        // the person deleted their account meanwhile
        if ((err as { code?: string }).code === "23503") throw unauthorized("the account is gone");
        throw err;
      });
  if (!stored) throw conflict("this passkey is registered already");
  return principal;
}

/** Options to sign in with any passkey of this relying party (the authenticator offers the person's own). */
export async function loginOptions(svc: Services): Promise<Ceremony> {
  const { generateAuthenticationOptions } = await import("@simplewebauthn/server");
  const options = await generateAuthenticationOptions({
    rpID: svc.config.FLOCK_DOMAIN,
    userVerification: "preferred",
    timeout: CEREMONY_TTL_MS,
  });
  return ceremony(svc, "login", options);
}

/** Checks a sign-in's answer against the stored passkey; the person's id. 401 in every other case. */
export async function finishLogin(svc: Services, answer: PasskeyAnswer): Promise<string> {
  const origin = answerOrigin(svc.config, answer);
  checkAssertion(answer.response.response);
  const c = await taken(svc, answer, "login");
  const stored = await passkeyById(svc.sql, answer.response.id);
  if (!stored) throw unauthorized("unknown passkey: sign up with it first, or use another sign-in");
  const { verifyAuthenticationResponse } = await import("@simplewebauthn/server");
  let newCounter: number;
  try {
    const v = await verifyAuthenticationResponse({
      response: answer.response as never,
      expectedChallenge: c.challenge,
      expectedOrigin: origin,
      expectedRPID: svc.config.FLOCK_DOMAIN,
      // counter 0: the library does not judge the counter (its refusal would be in its words); it is judged below,
      // once the signature over it is verified, by the library's rule, then kept atomically
      credential: {
        id: stored.id,
        publicKey: new Uint8Array(stored.public_key),
        counter: 0,
        transports: stored.transports as never,
      },
      requireUserVerification: false,
    });
    if (!v.verified) throw new Error("not verified");
    newCounter = v.authenticationInfo.newCounter;
  } catch (err) {
    throw refused(
      svc,
      err,
      "the passkey sign-in could not be verified: its signature does not match the passkey and the challenge",
    );
  }
  const before = Number(stored.counter);
  const wentBack = (newCounter > 0 || before > 0) && newCounter <= before;
  if (wentBack || !(await usedPasskey(svc.sql, stored.id, newCounter, new Date(svc.now())))) {
    throw new ApiError(
      "unauthorized",
      "the passkey's signature counter went back: a copy of the authenticator may be in use",
    );
  }
  return stored.principal;
}
