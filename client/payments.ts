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
const toUnits = (dollars: number) => BigInt(Math.round(dollars * UNITS_PER_DOLLAR));

/**
 * Atomic units as dollars, with at least 2 decimals and as many more as it needs (up to 6).
 *
 * @example
 * ```ts
 * import { dollars } from "@flock/client/payments";
 * console.log(dollars(50_000n)); // "$0.05"
 * ```
 */
export function dollars(units: bigint): string {
  const sign = units < 0n ? "-" : "";
  const abs = units < 0n ? -units : units;
  const whole = abs / BigInt(UNITS_PER_DOLLAR);
  const frac = (abs % BigInt(UNITS_PER_DOLLAR)).toString().padStart(6, "0").replace(/0+$/, "").padEnd(2, "0");
  return `${sign}$${whole}.${frac}`;
}

/**
 * Pays paid agents (x402 v2, the exact EVM scheme) with a viem account, within a per-message and a per-session cap
 * in US dollars; refusals (a price above a cap) are PaymentRequiredErrors that say the amounts in dollars.
 * @example
 * ```ts
 * import { Flock } from "@flock/client";
 * import { Payer } from "@flock/client/payments";
 * import { privateKeyToAccount } from "viem/accounts";
 *
 * const payer = new Payer({ account: privateKeyToAccount(key), maxPerMessage: 0.5, maxPerSession: 10 });
 * const flock = new Flock({ baseUrl: "http://localhost:8080", token, payments: payer });
 * await flock.send(paidAgentId, "a paid question"); // pays the price if it is within both caps
 * console.log(payer.spent); // atomic units (1e-6 dollars) signed for so far
 * ```
 */
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
   * @example
   * ```ts
   * // the SDK calls it for a 402; by hand:
   * const headers = await payer.headersFor(paymentRequiredOf(res.headers, body)!, body);
   * ```
   */
  async headersFor(requiredAnswer: PaymentRequired, body: unknown): Promise<Record<string, string>> {
    // the same x402 v2 object the server sent, read by the core SDK without x402's own (stricter) typing
    const required = requiredAnswer as X402PaymentRequired;
    const fits = required.accepts
      .filter(
        (r: PaymentRequirements) => r.scheme === "exact" && r.network.startsWith("eip155:") && /^\d+$/.test(r.amount),
      )
      .sort((a, b) => (BigInt(a.amount) < BigInt(b.amount) ? -1 : 1));
    const pick = fits[0];
    if (!pick)
      throw new PaymentRequiredError(
        "no payment option this client can pay (exact scheme on an EVM network)",
        required,
        body,
      );
    const amount = BigInt(pick.amount);
    if (amount > this.perMessage) {
      throw new PaymentRequiredError(
        `the price (${dollars(amount)}) is above this client's per-message cap (${dollars(this.perMessage)}): raise maxPerMessage to pay it`,
        required,
        body,
      );
    }
    if (this.signedFor + amount > this.perSession) {
      const left = this.perSession - this.signedFor;
      throw new PaymentRequiredError(
        `paying ${dollars(amount)} would pass this client's session cap (${dollars(this.perSession)}, ${dollars(left)} left): raise maxPerSession or use a new Payer`,
        required,
        body,
      );
    }
    this.signedFor += amount;
    const payload = await this.http.createPaymentPayload({ ...required, accepts: [pick] });
    return this.http.encodePaymentSignatureHeader(payload);
  }
}
