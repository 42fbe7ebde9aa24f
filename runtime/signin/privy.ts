// Identity-provider (Privy) login: verify its ES256 access or identity token with jose against the configured
// verification key (PEM or JWK) or its JWKS URL; audience = the app id, issuer and expiry checked.
import {
  createRemoteJWKSet,
  type CryptoKey,
  errors,
  importJWK,
  importSPKI,
  type JWTPayload,
  type JWTVerifyGetKey,
  jwtVerify,
} from "jose";
import type { Config } from "../config.ts";
import { ApiError, unauthorized } from "../errors.ts";
import type { Logger } from "../log.ts";

const ALG = "ES256";
/** Clock skew tolerated on exp / iat / nbf, in seconds. */
const CLOCK_TOLERANCE = 5;

interface ProviderLogin {
  subject: string;
  /** Lowercase addresses of embedded wallets the token vouches for. */
  embeddedWallets: string[];
}

export type ProviderKeys = { key: Promise<CryptoKey | Uint8Array> } | { getKey: JWTVerifyGetKey };

/** The configured verification key (or JWKS), built once by startNode (svc.providerKeys); null when none is. */
export function providerKeys(config: Config): ProviderKeys | null {
  if (!config.PRIVY_APP_ID) return null;
  let source: ProviderKeys;
  if (config.PRIVY_VERIFICATION_KEY) {
    const raw = config.PRIVY_VERIFICATION_KEY.replace(/\\n/g, "\n").trim();
    const key = raw.startsWith("{") ? importJWK(JSON.parse(raw), ALG) : importSPKI(raw, ALG);
    key.catch(() => {}); // reported when used
    source = { key };
  } else if (config.PRIVY_JWKS_URL) {
    source = {
      getKey: createRemoteJWKSet(new URL(config.PRIVY_JWKS_URL), {
        timeoutDuration: 5_000,
        cooldownDuration: 30_000,
        cacheMaxAge: 10 * 60_000,
      }),
    };
  } else {
    return null;
  }
  return source;
}

/** The subject (and embedded wallets) of a valid provider token; 401 for any token we must not accept. */
export async function verifyProviderToken(
  config: Config,
  source: ProviderKeys | null,
  token: string,
  now: number,
  log: Logger,
): Promise<ProviderLogin> {
  if (!source || !config.PRIVY_APP_ID) {
    throw new ApiError("not_found", "identity-provider login is not configured on this server");
  }
  const options = {
    algorithms: [ALG],
    audience: config.PRIVY_APP_ID,
    issuer: config.PRIVY_ISSUER,
    currentDate: new Date(now),
    clockTolerance: CLOCK_TOLERANCE,
    requiredClaims: ["sub", "exp", "iat"],
  };
  let payload: JWTPayload;
  try {
    if ("key" in source) {
      let key: CryptoKey | Uint8Array;
      try {
        key = await source.key;
      } catch (err) {
        log.error({ err }, "PRIVY_VERIFICATION_KEY cannot be imported as an ES256 public key");
        throw new ApiError("unavailable", "identity-provider login is misconfigured");
      }
      ({ payload } = await jwtVerify(token, key, options));
    } else {
      ({ payload } = await jwtVerify(token, source.getKey, options));
    }
  } catch (err) {
    throw refusal(err, log);
  }
  const subject = payload.sub;
  if (!subject || subject.length > 255) throw unauthorized("token has no usable subject");
  return { subject, embeddedWallets: embeddedWallets(payload) };
}

function refusal(err: unknown, log: Logger): ApiError {
  if (err instanceof ApiError) return err;
  if (err instanceof errors.JWTExpired) return unauthorized("token expired");
  if (err instanceof errors.JWTClaimValidationFailed) {
    if (err.claim === "aud") return unauthorized("token was issued for another app");
    if (err.claim === "iss") return unauthorized("token was issued by another issuer");
    return unauthorized(`token claim not accepted: ${err.claim}`);
  }
  if (err instanceof errors.JWKSTimeout || err instanceof errors.JWKSInvalid || !(err instanceof errors.JOSEError)) {
    log.warn({ err }, "identity-provider keys unavailable");
    return new ApiError("unavailable", "the identity provider's keys could not be fetched; try again");
  }
  if (err instanceof errors.JOSEAlgNotAllowed) return unauthorized(`token must be signed with ${ALG}`);
  if (err instanceof errors.JWSSignatureVerificationFailed || err instanceof errors.JWKSNoMatchingKey) {
    return unauthorized("bad token signature");
  }
  return unauthorized("malformed token");
}

const ADDRESS_RE = /^0x[0-9a-fA-F]{40}$/;

/**
 * Embedded wallets named by the token's `linked_accounts` claim (identity tokens carry it, as a JSON string or an
 * array): entries `{type: "wallet", address, wallet_client_type: "privy" | connector_type: "embedded"}`.
 */
function embeddedWallets(payload: JWTPayload): string[] {
  let linked: unknown = payload["linked_accounts"];
  if (typeof linked === "string") {
    try {
      linked = JSON.parse(linked);
    } catch {
      return [];
    }
  }
  if (!Array.isArray(linked)) return [];
  const out: string[] = [];
  for (const acct of linked as unknown[]) {
    if (typeof acct !== "object" || acct === null) continue;
    const a = acct as Record<string, unknown>;
    const embedded = a["wallet_client_type"] === "privy" || a["connector_type"] === "embedded";
    if (a["type"] === "wallet" && embedded && typeof a["address"] === "string" && ADDRESS_RE.test(a["address"])) {
      out.push(a["address"].toLowerCase());
    }
  }
  return out.slice(0, 10);
}
