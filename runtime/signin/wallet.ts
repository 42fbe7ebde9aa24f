// Wallet sign-in (EIP-4361, "Sign-In with Ethereum") with viem's SIWE utilities.
// Step one hands out a nonce (stored in Postgres, valid for 5 minutes: wallet-nonces-store.ts) inside a ready-to-sign
// message; step two checks the signed message (domain, chain id, times, nonce, signer) and consumes the nonce, so it
// works once.
// viem is imported by the first sign-in (or at start with FLOCK_CHAIN_RPC_URL), not by every node at start
// (bench/RESULTS.md, "Idle memory (issue 30)").
import type { Hex, PublicClient } from "viem";
import { getAddress } from "../address.ts";
import type { Config } from "../config.ts";
import { ApiError, unauthorized } from "../errors.ts";
import type { Services } from "../services.ts";
import { consumeNonce, pendingNonce, saveNonce } from "./wallet-nonces-store.ts";

const NONCE_TTL_MS = 5 * 60_000;
const STATEMENT = "Sign in to Flock.";

interface Challenge {
  nonce: string;
  message: string;
  expires_at: string;
}

/** Step one: a fresh nonce for `address` and the EIP-4361 message naming it. */
export async function issueChallenge(svc: Services, address: string): Promise<Challenge> {
  const { createSiweMessage, generateSiweNonce } = await import("viem/siwe");
  const now = svc.now();
  const nonce = generateSiweNonce();
  const expiresAt = new Date(now + NONCE_TTL_MS);
  const message = createSiweMessage({
    address: getAddress(address),
    chainId: svc.config.FLOCK_CHAIN_ID,
    domain: svc.config.FLOCK_DOMAIN,
    nonce,
    uri: `https://${svc.config.FLOCK_DOMAIN}`,
    version: "1",
    statement: STATEMENT,
    issuedAt: new Date(now),
    expirationTime: expiresAt,
  });
  // Housekeeping: nonces nobody used. Kept an hour past expiry so a late answer hears "expired", not "unknown".
  await saveNonce(svc.sql, nonce, address.toLowerCase(), expiresAt, new Date(now - 3_600_000));
  return { nonce, message, expires_at: expiresAt.toISOString() };
}

/** Step two: the lowercase address that signed a valid, fresh, unused challenge; 401 in every other case. */
export async function verifyChallenge(svc: Services, message: string, signature: Hex): Promise<string> {
  const { parseSiweMessage, validateSiweMessage } = await import("viem/siwe");
  const { config } = svc;
  const now = new Date(svc.now());
  let parsed: ReturnType<typeof parseSiweMessage>;
  try {
    parsed = parseSiweMessage(message);
  } catch {
    throw unauthorized("not an EIP-4361 sign-in message");
  }
  if (!parsed.address || !parsed.nonce || !parsed.domain) throw unauthorized("not an EIP-4361 sign-in message");
  if (parsed.domain !== config.FLOCK_DOMAIN)
    throw unauthorized(`the message is for another domain (expected ${config.FLOCK_DOMAIN})`);
  if (parsed.chainId !== config.FLOCK_CHAIN_ID)
    throw unauthorized(`the message is for another chain (expected ${config.FLOCK_CHAIN_ID})`);
  if (!validateSiweMessage({ message: parsed, domain: config.FLOCK_DOMAIN, time: now })) {
    throw unauthorized("the sign-in message is expired, not yet valid or malformed");
  }
  const address = parsed.address.toLowerCase();
  const pending = await pendingNonce(svc.sql, parsed.nonce);
  if (!pending) throw unauthorized("unknown or already used nonce; ask for a new challenge");
  if (pending.expires_at.getTime() <= now.getTime()) throw unauthorized("nonce expired; ask for a new challenge");
  if (pending.address !== address) throw unauthorized("the nonce was issued to another address");

  if (!(await signatureValid(svc.chain, config, message, signature, parsed.address, now))) {
    throw unauthorized("bad signature");
  }
  // Consume: of two concurrent answers with the same nonce, one wins.
  if (!(await consumeNonce(svc.sql, parsed.nonce, now)))
    throw unauthorized("unknown or already used nonce; ask for a new challenge");
  return address;
}

/** The chain client that verifies smart wallets, built once by startNode (svc.chain); null without FLOCK_CHAIN_RPC_URL. */
export async function chainClient(config: Config): Promise<PublicClient | null> {
  if (!config.FLOCK_CHAIN_RPC_URL) return null;
  const { createPublicClient, http } = await import("viem");
  return createPublicClient({ transport: http(config.FLOCK_CHAIN_RPC_URL, { timeout: 10_000, retryCount: 1 }) });
}

async function signatureValid(
  client: PublicClient | null,
  config: Config,
  message: string,
  signature: Hex,
  address: Hex,
  now: Date,
): Promise<boolean> {
  const { BaseError, HttpRequestError, TimeoutError, verifyMessage } = await import("viem");
  // Externally owned accounts (ecrecover) need no chain.
  if (await verifyMessage({ address, message, signature }).catch(() => false)) return true;
  // With a chain: deployed smart wallets (ERC-1271) and counterfactual ones (ERC-6492).
  if (!client) return false;
  try {
    return await client.verifySiweMessage({ message, signature, domain: config.FLOCK_DOMAIN, time: now });
  } catch (err) {
    if (err instanceof BaseError && err.walk((e) => e instanceof HttpRequestError || e instanceof TimeoutError)) {
      throw new ApiError("unavailable", "the chain could not be asked to verify the signature; try again");
    }
    return false; // a malformed signature
  }
}
