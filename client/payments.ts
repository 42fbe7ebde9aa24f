// "@flock/client/payments": paying paid agents. x402 v2 with the official client classes (re-exported by
// @x402/fetch) and the exact EVM scheme of @x402/evm, signing EIP-3009 authorizations with the viem account given
// in the options, under a per-message and a per-session spending cap (US dollars). The x402 packages are optional
// peers of @flock/client: only this sub-export loads them.
//   new Flock({ baseUrl, payments: new Payer({ account: privateKeyToAccount(key), maxPerMessage: 0.5 }) })
import type { PaymentRequired as X402PaymentRequired, PaymentRequirements } from "@x402/core/types";
import type { ClientEvmSigner } from "@x402/evm";
import { ExactEvmScheme } from "@x402/evm/exact/client";
import { x402Client, x402HTTPClient } from "@x402/fetch";
import { PaymentRequiredError } from "./errors.ts";
import type { PaymentHandler } from "./payment-required.ts";
import type { PaymentRequired } from "./types.ts";

export { paymentRequiredOf, type PaymentHandler } from "./payment-required.ts";

export interface PaymentOptions {
  /** The paying wallet: a viem LocalAccount (privateKeyToAccount, mnemonicToAccount) or anything that signs typed data. */
  account: ClientEvmSigner;
  /** Most this client pays for one message, in US dollars (default 1). */
  maxPerMessage?: number;
  /** Most this client signs for in total over its lifetime, in US dollars (default 10). */
  maxPerSession?: number;
}

/** Every Flock network settles in a USD stablecoin with 6 decimals: 1 dollar is 1,000,000 atomic units. */
const UNITS_PER_DOLLAR = 1_000_000;
const toUnits = (dollars: number) => BigInt(Math.floor(dollars * UNITS_PER_DOLLAR));

export class Payer implements PaymentHandler {
  private readonly http: x402HTTPClient;
  private readonly perMessage: bigint;
  private readonly perSession: bigint;
  private signedFor = 0n;

  constructor(opts: PaymentOptions) {
    this.perMessage = toUnits(opts.maxPerMessage ?? 1);
    this.perSession = toUnits(opts.maxPerSession ?? 10);
    // Our own caps replace x402's default spend controls (which only know the public default assets).
    const client = new x402Client().register("eip155:*", new ExactEvmScheme(opts.account)).setSpendControls(false);
    this.http = new x402HTTPClient(client);
  }

  /** Atomic units signed for so far (every signed authorization counts: whoever holds one may settle it). */
  get spent(): bigint {
    return this.signedFor;
  }

  /**
   * The payment headers for a 402's requirements: the cheapest exact option within both caps is signed and its
   * amount counted before signing. Raises PaymentRequiredError when no option fits.
   */
  async headersFor(requiredAnswer: PaymentRequired, body: unknown): Promise<Record<string, string>> {
    // the same x402 v2 object the server sent, read by the core SDK without x402's own (stricter) typing
    const required = requiredAnswer as X402PaymentRequired;
    const fits = required.accepts
      .filter((r: PaymentRequirements) => r.scheme === "exact" && r.network.startsWith("eip155:") && /^\d+$/.test(r.amount))
      .sort((a, b) => (BigInt(a.amount) < BigInt(b.amount) ? -1 : 1));
    const pick = fits[0];
    if (!pick) throw new PaymentRequiredError("no payment option this client can pay (exact scheme on an EVM network)", required, body);
    const amount = BigInt(pick.amount);
    if (amount > this.perMessage) {
      throw new PaymentRequiredError(`the price (${amount} units) is above this client's per-message cap (${this.perMessage})`, required, body);
    }
    if (this.signedFor + amount > this.perSession) {
      throw new PaymentRequiredError(`paying ${amount} units would pass this client's session cap (${this.perSession})`, required, body);
    }
    this.signedFor += amount;
    const payload = await this.http.createPaymentPayload({ ...required, accepts: [pick] });
    return this.http.encodePaymentSignatureHeader(payload);
  }
}
