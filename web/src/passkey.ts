// Passkeys in the browser (WebAuthn): the server's options in WebAuthn's JSON form are turned into the browser's
// with PublicKeyCredential.parseCreationOptionsFromJSON / parseRequestOptionsFromJSON, and the credential back into
// JSON with toJSON() (Chromium 129+, Firefox 119+, Safari 18.4+). A page opened at an IP address cannot use them at
// all: passkeyHostProblem says so before the browser is asked.
import type { Flock, Login } from "@flock/client";

interface JsonPublicKeyCredential {
  parseCreationOptionsFromJSON(json: unknown): PublicKeyCredentialCreationOptions;
  parseRequestOptionsFromJSON(json: unknown): PublicKeyCredentialRequestOptions;
}

function api(): JsonPublicKeyCredential | null {
  const pkc = (globalThis as { PublicKeyCredential?: unknown }).PublicKeyCredential as
    Partial<JsonPublicKeyCredential> | undefined;
  return pkc?.parseCreationOptionsFromJSON && pkc.parseRequestOptionsFromJSON ? (pkc as JsonPublicKeyCredential) : null;
}

/** Whether this browser can use passkeys the way the page does. */
export const passkeysSupported = (): boolean => api() !== null && !!navigator.credentials;

/**
 * Why passkeys cannot work at this page's address, or null where they can: WebAuthn takes a host name, never an IP
 * address, as the site a passkey belongs to. For a loopback address (127.x.x.x, [::1]) the same page on localhost,
 * where they work; null for another address, whose name the page cannot know.
 */
export function passkeyHostProblem(href: string = location.href): { localhost: string | null } | null {
  const u = new URL(href);
  const host = u.hostname;
  const v4 = /^\d{1,3}(\.\d{1,3}){3}$/.test(host);
  if (!v4 && !host.startsWith("[")) return null;
  if (!(host.startsWith("127.") || host === "[::1]")) return { localhost: null };
  u.hostname = "localhost";
  return { localhost: u.href };
}

const asJson = (cred: Credential | null): object => {
  if (!cred) throw new Error("No passkey was chosen.");
  return (cred as unknown as { toJSON(): object }).toJSON();
};

/** Sign up as a new person with a new passkey. */
export async function signUpWithPasskey(client: Flock, displayName: string | undefined): Promise<Login> {
  const { challenge_id, options } = await client.passkeySignUpOptions(displayName);
  const cred = await navigator.credentials.create({ publicKey: api()!.parseCreationOptionsFromJSON(options) });
  return client.passkeyRegister(challenge_id, asJson(cred));
}

/** Sign in with a passkey this browser or device holds. */
export async function signInWithPasskey(client: Flock): Promise<Login> {
  const { challenge_id, options } = await client.passkeyLoginOptions();
  const cred = await navigator.credentials.get({ publicKey: api()!.parseRequestOptionsFromJSON(options) });
  return client.passkeyLogin(challenge_id, asJson(cred));
}

/** Add a passkey to the signed-in person (the client holds their token). */
export async function addPasskey(client: Flock): Promise<Login> {
  const { challenge_id, options } = await client.addPasskeyOptions();
  const cred = await navigator.credentials.create({ publicKey: api()!.parseCreationOptionsFromJSON(options) });
  return client.passkeyRegister(challenge_id, asJson(cred));
}
