// Reading a 402 answer without any payment library: the PAYMENT-REQUIRED header (base64 of the JSON requirements,
// x402 v2) or the copy in Flock's error body. Paying is the job of a PaymentHandler, such as the Payer of
// "@flock/client/payments", so a client that never pays loads no wallet code.
import { loadPayments } from "./payment-packages.ts";
import type { PaymentRequired } from "./types.ts";

/** Whatever signs payments for the client: given a 402's requirements, the headers of the paid retry. */
export interface PaymentHandler {
  /** The headers of the paid retry for a 402 answer's requirements (and its body). */
  headersFor(required: PaymentRequired, body: unknown): Promise<Record<string, string>>;
}

/**
 * The `payments` option as plain settings: the SDK makes the `Payer` of "@flock/client/payments" from them when the
 * first payment is due (loading the optional x402 packages then, not before).
 */
export interface PaymentSettings {
  /** The paying wallet: a viem LocalAccount (`privateKeyToAccount(key)`) or anything that signs EIP-712 typed data. */
  account: { readonly address: `0x${string}`; signTypedData(message: never): Promise<`0x${string}`> };
  /** Most this client pays for one message, in US dollars (default 1). */
  maxPerMessage?: number;
  /** Most this client signs for in total over its lifetime, in US dollars (default 10). */
  maxPerSession?: number;
}

/** A PaymentHandler for plain settings: the Payer is made (and x402 loaded) at the first payment. */
export function lazyPayer(settings: PaymentSettings): PaymentHandler {
  let payer: Promise<PaymentHandler> | undefined;
  return {
    async headersFor(required, body) {
      // the account's signTypedData is the one x402 calls: the structural type above only keeps x402's types out of
      // the SDK's own declarations
      payer ??= loadPayments(() => import("./payments.ts")).then(
        (m) => new m.Payer(settings as unknown as ConstructorParameters<typeof m.Payer>[0]),
      );
      return (await payer).headersFor(required, body);
    },
  };
}

/** A PaymentHandler already, or settings to make one from? */
export function paymentHandlerOf(p: PaymentHandler | PaymentSettings | undefined): PaymentHandler | undefined {
  if (p === undefined) return undefined;
  return typeof (p as Partial<PaymentHandler>).headersFor === "function"
    ? (p as PaymentHandler)
    : lazyPayer(p as PaymentSettings);
}

function isPaymentRequired(v: unknown): v is PaymentRequired {
  const b = v as Partial<PaymentRequired> | null | undefined;
  return typeof b === "object" && b !== null && Array.isArray(b.accepts) && typeof b.x402Version === "number";
}

function decodeBase64Json(value: string): unknown {
  const bytes = Uint8Array.from(atob(value), (c) => c.charCodeAt(0));
  return JSON.parse(new TextDecoder().decode(bytes));
}

/**
 * The requirements of a 402 answer: the PAYMENT-REQUIRED header, or the copy in the error body; null when neither.
 * @example
 * ```ts
 * const res = await fetch(`${baseUrl}/v1/messages`, { method: "POST", headers, body });
 * if (res.status === 402) console.log(paymentRequiredOf(res.headers, await res.json())?.accepts);
 * ```
 */
export function paymentRequiredOf(headers: Headers, body: unknown): PaymentRequired | null {
  const h = headers.get("payment-required");
  if (h) {
    try {
      const decoded = decodeBase64Json(h);
      if (isPaymentRequired(decoded)) return decoded;
    } catch {
      // fall through to the body
    }
  }
  return isPaymentRequired(body) ? body : null;
}
