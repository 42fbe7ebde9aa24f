// The shape of a passkey answer (WebAuthn's JSON form of a credential), checked before @simplewebauthn/server sees it:
// a malformed answer is a 400 in our own words, never the library's (whose messages on bad input are its internals:
// "decodedAttestationObject.get is not a function"). What is well formed but does not verify stays a 401
// (runtime/signin/passkeys.ts), also in our own words.
import { invalid } from "../errors.ts";

const B64URL = /^[A-Za-z0-9_-]*={0,2}$/;
/** Authenticator data: the relying party's id hash (32 bytes), the flags (1), the signature counter (4). */
const AUTH_DATA_MIN = 37;
/** Flag of authenticator data that carries the new credential (a registration's must). */
const ATTESTED = 0x40;

/** Said for every malformed answer: what is wrong, in our words. */
export const malformedAnswer = (what: string) =>
  invalid(`the passkey answer is malformed (${what}); send what the browser's credential.toJSON() gives`, {
    field: "response",
  });

/** A base64url field of the answer's `response`, decoded; 400 when absent or not base64url. */
function bytes(response: Record<string, unknown>, field: string, min = 1): Buffer {
  const v = response[field];
  if (typeof v !== "string" || !B64URL.test(v)) throw malformedAnswer(`response.${field} must be base64url`);
  const out = Buffer.from(v, "base64url");
  if (out.length < min) throw malformedAnswer(`response.${field} is too short`);
  return out;
}

/** The client data the browser wrote (a JSON object naming its type, challenge and origin); 400 otherwise. */
export function clientData(response: Record<string, unknown>): { type: string; challenge: string; origin: string } {
  const raw = bytes(response, "clientDataJSON");
  let data: unknown;
  try {
    data = JSON.parse(raw.toString("utf8"));
  } catch {
    throw malformedAnswer("response.clientDataJSON is not JSON");
  }
  const d = data as Record<string, unknown> | null;
  if (
    d === null ||
    typeof d !== "object" ||
    typeof d["type"] !== "string" ||
    typeof d["challenge"] !== "string" ||
    typeof d["origin"] !== "string"
  ) {
    throw malformedAnswer("response.clientDataJSON must name a type, a challenge and an origin");
  }
  return { type: d["type"], challenge: d["challenge"], origin: d["origin"] };
}

/**
 * A registration's attestation object: CBOR, a map of `fmt` (text), `attStmt` (a map) and `authData` (bytes that
 * carry the new credential); 400 otherwise. The CBOR decoder is the library's (a bounded input: the JSON body cap).
 */
export async function checkAttestation(response: Record<string, unknown>): Promise<void> {
  const raw = bytes(response, "attestationObject");
  const { isoCBOR } = await import("@simplewebauthn/server/helpers");
  let decoded: unknown;
  try {
    decoded = isoCBOR.decodeFirst<unknown>(new Uint8Array(raw));
  } catch {
    throw malformedAnswer("response.attestationObject is not CBOR");
  }
  if (!(decoded instanceof Map)) throw malformedAnswer("response.attestationObject must be a CBOR map");
  const fmt: unknown = decoded.get("fmt");
  const stmt: unknown = decoded.get("attStmt");
  const authData: unknown = decoded.get("authData");
  if (typeof fmt !== "string" || !(stmt instanceof Map) || !(authData instanceof Uint8Array)) {
    throw malformedAnswer("response.attestationObject must hold fmt, attStmt and authData");
  }
  if (authData.length < AUTH_DATA_MIN + 18 || (authData[32]! & ATTESTED) === 0) {
    throw malformedAnswer("response.attestationObject's authData carries no credential");
  }
}

/** A sign-in's assertion: authenticator data (at least 37 bytes), a signature, and a user handle if any; 400 otherwise. */
export function checkAssertion(response: Record<string, unknown>): void {
  bytes(response, "authenticatorData", AUTH_DATA_MIN);
  bytes(response, "signature");
  if (response["userHandle"] !== undefined && response["userHandle"] !== null) bytes(response, "userHandle", 0);
}
