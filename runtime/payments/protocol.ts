// x402 v2 on our side of the wire: the payment requirements of a paid agent, the 402 answer (the
// PAYMENT-REQUIRED header, base64 JSON as @x402/core encodes it, and the same requirements in our error body),
// decoding PAYMENT-SIGNATURE (or the v1 header name X-PAYMENT carrying a v2 payload), and checking a payload
// against our requirements before anything is claimed. Header coding is @x402/core's.
import type * as X402Http from "@x402/core/http";
import type { PaymentPayload, PaymentRequired, PaymentRequirements } from "@x402/core/types";
import { getAddress, isAddress } from "../address.ts";
import { ApiError } from "../errors.ts";
import { type Asset, atomicAmount } from "./assets.ts";

/** @x402/core's header coding: imported by the first paid send, not at start (bench/RESULTS.md, "Idle memory (issue 30)"). */
type HeaderCodec = Pick<
  typeof X402Http,
  "encodePaymentRequiredHeader" | "decodePaymentSignatureHeader" | "encodePaymentResponseHeader"
>;

export const headerCodec = (): Promise<HeaderCodec> => import("@x402/core/http");

export interface Terms {
  asset: Asset;
  micros: bigint;
  payTo: string;
}

/** What a paid send must carry: one "exact" EIP-3009 transfer of the price to the agent's address. */
export function requirementsFor(terms: Terms, maxTimeoutSeconds: number): PaymentRequirements {
  return {
    scheme: "exact",
    network: terms.asset.network as PaymentRequirements["network"],
    asset: terms.asset.address,
    amount: atomicAmount(terms.asset, terms.micros).toString(),
    payTo: terms.payTo,
    maxTimeoutSeconds,
    extra: { name: terms.asset.eip712.name, version: terms.asset.eip712.version },
  };
}

export function paymentRequired(
  req: PaymentRequirements,
  resourceUrl: string,
  agent: string,
  error?: string,
): PaymentRequired {
  return {
    x402Version: 2,
    ...(error ? { error } : {}),
    resource: { url: resourceUrl, description: `a message to paid agent ${agent}`, mimeType: "application/json" },
    accepts: [req],
  };
}

/**
 * The 402 answer: our error shape ({"error":"payment_required","message"}) plus the x402 v2 fields
 * (x402Version, resource, accepts) and `reason` for a refused payment; the PAYMENT-REQUIRED header carries the
 * same requirements.
 */
export function paymentRequiredError(
  codec: HeaderCodec,
  pr: PaymentRequired,
  message: string,
  reason?: string,
): ApiError {
  return new ApiError(
    "payment_required",
    message,
    { ...(reason ? { reason } : {}), x402Version: pr.x402Version, resource: pr.resource, accepts: pr.accepts },
    { "PAYMENT-REQUIRED": codec.encodePaymentRequiredHeader(pr) },
  );
}

/** An EIP-3009 authorization as the exact EVM scheme carries it. */
export interface Authorization {
  from: string;
  to: string;
  value: bigint;
  validAfter: bigint;
  validBefore: bigint;
  nonce: string;
}

/** The payment header of a request: PAYMENT-SIGNATURE (x402 v2), or X-PAYMENT (v1's name) carrying the same. */
export const paymentHeader = (headers: Record<string, string>): string | undefined =>
  headers["payment-signature"] ?? headers["x-payment"];

type Checked =
  | { ok: true; payload: PaymentPayload; auth: Authorization; requirements: PaymentRequirements }
  | { ok: false; reason: string; message: string };

const fail = (reason: string, message: string): Checked => ({ ok: false, reason, message });
const HEX32 = /^0x[0-9a-fA-F]{64}$/;
const SIG = /^0x[0-9a-fA-F]+$/;
const UINT = /^[0-9]{1,78}$/;

/**
 * Decodes and checks a payment against our requirements: x402 v2, scheme exact, our network, asset and payTo,
 * an amount of at least the price (the authorization's value equals the amount it accepted), and a validity
 * window that includes now (`nowSec`) with at least 6 seconds left. Answers the requirements the facilitator is
 * asked to verify and settle against (ours, with the accepted amount).
 */
export function checkPayment(codec: HeaderCodec, header: string, ours: PaymentRequirements, nowSec: number): Checked {
  let payload: PaymentPayload;
  try {
    payload = codec.decodePaymentSignatureHeader(header);
  } catch {
    return fail("invalid_payload", "the payment header is not base64 JSON of an x402 payment payload");
  }
  if (typeof payload !== "object" || payload === null)
    return fail("invalid_payload", "the payment payload is not an object");
  if (payload.x402Version !== 2)
    return fail("unsupported_version", "only x402 version 2 payment payloads are accepted");
  const a = payload.accepted as Partial<PaymentRequirements> | undefined;
  if (!a || typeof a !== "object") return fail("invalid_payload", "the payment payload has no `accepted` requirements");
  if (a.scheme !== "exact") return fail("scheme_mismatch", "only the `exact` scheme is accepted");
  if (a.network !== ours.network) return fail("network_mismatch", `payments to this agent settle on ${ours.network}`);
  if (typeof a.asset !== "string" || a.asset.toLowerCase() !== ours.asset.toLowerCase())
    return fail("asset_mismatch", `the asset must be ${ours.asset}`);
  if (typeof a.payTo !== "string" || a.payTo.toLowerCase() !== ours.payTo.toLowerCase())
    return fail("recipient_mismatch", `payments to this agent go to ${ours.payTo}`);
  if (typeof a.amount !== "string" || !UINT.test(a.amount) || BigInt(a.amount) < BigInt(ours.amount)) {
    return fail("amount_too_low", `the amount must be at least ${ours.amount} atomic units`);
  }
  const p = payload.payload as { authorization?: Record<string, unknown>; signature?: unknown };
  const au = p?.authorization;
  if (!au || typeof au !== "object" || typeof p.signature !== "string" || !SIG.test(p.signature)) {
    return fail("invalid_payload", "the payload must carry an EIP-3009 authorization and its signature");
  }
  const str = (k: string) => (typeof au[k] === "string" ? (au[k] as string) : "");
  if (!isAddress(str("from")) || !isAddress(str("to")))
    return fail("invalid_payload", "authorization from/to must be EVM addresses");
  if (!HEX32.test(str("nonce"))) return fail("invalid_payload", "the authorization nonce must be 32 bytes of hex");
  if (![str("value"), str("validAfter"), str("validBefore")].every((v) => UINT.test(v))) {
    return fail("invalid_payload", "authorization value/validAfter/validBefore must be decimal integers");
  }
  const auth: Authorization = {
    from: getAddress(str("from")),
    to: getAddress(str("to")),
    value: BigInt(str("value")),
    validAfter: BigInt(str("validAfter")),
    validBefore: BigInt(str("validBefore")),
    nonce: str("nonce").toLowerCase(),
  };
  if (auth.to.toLowerCase() !== ours.payTo.toLowerCase())
    return fail("recipient_mismatch", `payments to this agent go to ${ours.payTo}`);
  if (auth.value !== BigInt(a.amount))
    return fail("amount_mismatch", "the authorization's value differs from the accepted amount");
  if (auth.validBefore < BigInt(nowSec + 6))
    return fail("expired", "the authorization has expired (or expires within 6 seconds)");
  if (auth.validAfter > BigInt(nowSec)) return fail("not_yet_valid", "the authorization is not valid yet");
  return { ok: true, payload, auth, requirements: { ...ours, amount: a.amount } };
}
