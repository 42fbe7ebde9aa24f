// Reading a 402 answer without any payment library: the PAYMENT-REQUIRED header (base64 of the JSON requirements,
// x402 v2) or the copy in Flock's error body. Paying is the job of a PaymentHandler, such as the Payer of
// "@flock/client/payments", so a client that never pays loads no wallet code.
import type { PaymentRequired } from "./types.ts";

/** Whatever signs payments for the client: given a 402's requirements, the headers of the paid retry. */
export interface PaymentHandler {
  headersFor(required: PaymentRequired, body: unknown): Promise<Record<string, string>>;
}

function isPaymentRequired(v: unknown): v is PaymentRequired {
  const b = v as Partial<PaymentRequired> | null | undefined;
  return typeof b === "object" && b !== null && Array.isArray(b.accepts) && typeof b.x402Version === "number";
}

function decodeBase64Json(value: string): unknown {
  const bytes = Uint8Array.from(atob(value), (c) => c.charCodeAt(0));
  return JSON.parse(new TextDecoder().decode(bytes));
}

/** The requirements of a 402 answer: the PAYMENT-REQUIRED header, or the copy in the error body; null when neither. */
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
