// What the operator allows the MCP server to pay: a wallet key and two caps in US dollars, from flags or the
// environment (FLOCK_MCP_PRIVATE_KEY, FLOCK_MCP_MAX_PER_MESSAGE, FLOCK_MCP_MAX_TOTAL). Without a key, or with a
// cap of 0 (the default), nothing is ever signed. The Payer of "@flock/client/payments" enforces both caps before
// it signs; its x402 and viem code is loaded only when a key is configured.
import { loadPayments } from "../payment-packages.ts";
import type { PaymentHandler } from "../payment-required.ts";

export interface PaymentCaps {
  /** 0x-prefixed secp256k1 private key of the paying wallet. */
  privateKey?: string;
  /** Most paid for one message, in US dollars (default 0: never pay). */
  maxPerMessage: number;
  /** Most paid in total by this server process, in US dollars (default 0: never pay). */
  maxTotal: number;
}

/** What a refusal shows the model: the caps and what is left. */
export interface CapsView {
  caps: PaymentCaps | undefined;
  /** Atomic units (1e-6 dollars) signed for so far. */
  spent(): bigint;
}

export function capsFromEnv(
  env: NodeJS.ProcessEnv,
  flags: { key?: string; perMessage?: string; total?: string } = {},
): PaymentCaps {
  const dollars = (name: string, v: string | undefined) => {
    if (v === undefined || v === "") return 0;
    const n = Number(v);
    if (!Number.isFinite(n) || n < 0) throw new Error(`${name} must be a number of US dollars, 0 or more (got ${v})`);
    return n;
  };
  const privateKey = flags.key ?? env["FLOCK_MCP_PRIVATE_KEY"] ?? undefined;
  if (privateKey !== undefined && !/^0x[0-9a-fA-F]{64}$/.test(privateKey))
    throw new Error("FLOCK_MCP_PRIVATE_KEY must be 0x followed by 64 hex digits");
  return {
    privateKey: privateKey || undefined,
    maxPerMessage: dollars("FLOCK_MCP_MAX_PER_MESSAGE", flags.perMessage ?? env["FLOCK_MCP_MAX_PER_MESSAGE"]),
    maxTotal: dollars("FLOCK_MCP_MAX_TOTAL", flags.total ?? env["FLOCK_MCP_MAX_TOTAL"]),
  };
}

/** Whether paid sends can happen at all under these caps. */
export const canPay = (c: PaymentCaps | undefined): c is PaymentCaps & { privateKey: string } =>
  c?.privateKey !== undefined && c.maxPerMessage > 0 && c.maxTotal > 0;

/** The Payer for these caps (loads viem and the x402 packages), or undefined when paying is off. */
export async function payerFor(
  caps: PaymentCaps | undefined,
): Promise<(PaymentHandler & { readonly spent: bigint }) | undefined> {
  if (!canPay(caps)) return undefined;
  // not installed: a MissingPaymentPackagesError, which says nothing was sent and what to install (errors.ts)
  const [{ privateKeyToAccount }, { Payer }] = await loadPayments(() =>
    Promise.all([import("viem/accounts"), import("../payments.ts")]),
  );
  return new Payer({
    account: privateKeyToAccount(caps.privateKey as `0x${string}`),
    maxPerMessage: caps.maxPerMessage,
    maxPerSession: caps.maxTotal,
  });
}

export function describeCaps(view: CapsView): string {
  const c = view.caps;
  if (!c?.privateKey)
    return "This server has no paying wallet (the operator sets FLOCK_MCP_PRIVATE_KEY and the caps), so it cannot pay: nothing was signed.";
  if (!canPay(c))
    return "The operator's caps allow no payment (FLOCK_MCP_MAX_PER_MESSAGE and FLOCK_MCP_MAX_TOTAL must be above 0): nothing was signed.";
  const left = Math.max(0, c.maxTotal - Number(view.spent()) / 1_000_000);
  return `Operator caps: at most $${c.maxPerMessage} per message and $${c.maxTotal} in total ($${left.toFixed(6).replace(/0+$/, "").replace(/\.$/, "")} left). Use pay_and_send to pay within them; a price above them is refused and nothing is signed.`;
}
