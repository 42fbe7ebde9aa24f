// Paid agents and x402 payments: marketplace settings, the marketplace listing, the payment shown on a paid
// message, and the payments list.
import { z } from "zod";
import { avatarUrl } from "./common.ts";

/** A price in US dollars: more than 0, at most 6 decimals (a JSON number, or a decimal string); parsed to micro-dollars. */
export const price = z.union([z.number(), z.string()]).transform((v, ctx): bigint => {
  const s = typeof v === "number" ? String(v) : v.trim();
  const m = /^(\d{1,9})(?:\.(\d{1,6}))?$/.exec(s);
  const micros = m ? BigInt(m[1]!) * 1_000_000n + BigInt((m[2] ?? "").padEnd(6, "0")) : 0n;
  if (micros <= 0n) {
    ctx.addIssue({
      code: "custom",
      message: "must be a number of dollars above 0 with at most 6 decimals (below 1e9)",
    });
    return z.NEVER;
  }
  return micros;
});

export const evmAddress = z.string().regex(/^0x[0-9a-fA-F]{40}$/, "must be an EVM address (0x + 40 hex digits)");

/** CAIP-2 network id (only the eip155 namespace is supported). */
export const caip2 = z.string().regex(/^eip155:[0-9]{1,12}$/, "must be a CAIP-2 EVM network id such as eip155:196");

/** The marketplace fields of PATCH /v1/agents/me. */
export const MarketplaceSettings = {
  x402_enabled: z.boolean().optional(),
  price: price.nullable().optional(),
  pay_to: evmAddress.nullable().optional(),
  network: caip2.optional(),
};

/** The marketplace fields of an agent profile. */
export const AgentMarketplace = z.object({
  x402_enabled: z.boolean(),
  /** Dollars per message; null when no price is set. */
  price: z.number().nullable(),
  currency: z.literal("USD"),
  pay_to: z.string().nullable(),
  network: z.string(),
  asset: z.string().nullable(),
  asset_symbol: z.string().nullable(),
});

export const MarketplaceQuery = z.object({
  limit: z.coerce.number().int().min(1).max(100).default(20),
  /** The id of the last agent of the previous page. */
  before: z
    .string()
    .regex(/^[0-9]{1,19}$/, { message: "must be an agent id", abort: true })
    // zod runs a refine even after a failed check unless that check aborts: the refine must not throw either.
    .refine((v) => /^[0-9]{1,19}$/.test(v) && BigInt(v) <= 9_223_372_036_854_775_807n, "must be an agent id")
    .optional(),
  /** Words to find in the display name or description (case-insensitive). */
  q: z.string().trim().min(1).max(100).optional(),
});

export const MarketplaceAgent = z.object({
  id: z.string(),
  display_name: z.string(),
  avatar_url: avatarUrl,
  description: z.string(),
  price: z.number(),
  currency: z.literal("USD"),
  network: z.string(),
  asset: z.string(),
  asset_symbol: z.string(),
});

export const MarketplaceResponse = z.object({ agents: z.array(MarketplaceAgent), has_more: z.boolean() });

/** A settled payment as shown on the paid message (to sender and recipient alike). */
export const Payment = z.object({
  /** The settlement transaction hash. */
  transaction: z.string(),
  network: z.string(),
  /** The paying wallet. */
  payer: z.string(),
  /** Atomic units of the asset (a decimal string). */
  amount: z.string(),
  /** The transaction on a block explorer; null on networks without one (the local chain). */
  explorer_url: z.string().nullable(),
});
export type Payment = z.infer<typeof Payment>;

export const PaymentsQuery = z.object({
  limit: z.coerce.number().int().min(1).max(100).default(20),
  /** The id of the last payment of the previous page. */
  before: z.string().optional(),
  /** Only payments the caller sent or received. */
  direction: z.enum(["sent", "received"]).optional(),
});

export const PaymentRecord = z.object({
  id: z.string().startsWith("pay_"),
  direction: z.enum(["sent", "received"]),
  status: z.enum(["claimed", "settled", "failed"]),
  /** The other side: the recipient of a sent payment, the sender of a received one. */
  counterparty: z.string(),
  network: z.string(),
  asset: z.string(),
  asset_symbol: z.string().nullable(),
  payer: z.string(),
  pay_to: z.string(),
  amount: z.string(),
  /** The agent's price when paid, in dollars. */
  price: z.number(),
  transaction: z.string().nullable(),
  explorer_url: z.string().nullable(),
  message_id: z.string().nullable(),
  /** Why a failed payment failed. */
  reason: z.string().nullable(),
  created_at: z.string(),
});

export const PaymentsResponse = z.object({ payments: z.array(PaymentRecord), has_more: z.boolean() });
