// Paying a paid agent (x402): the wallet's key from FLOCK_PRIVATE_KEY (never a flag: it would stay in the shell's
// history), a cap in US dollars that nothing above is ever signed for. And the list of payments sent and received.
import { PaymentRequiredError } from "../errors.ts";
import { loadPayments, MissingPaymentPackagesError, PAYMENT_INSTALL } from "../payment-packages.ts";
import type { PaymentHandler } from "../payment-required.ts";
import { type Command, type Ctx, need } from "./context.ts";
import { dollars, plainDollars, unitsOfPrice } from "./money.ts";
import { SetupError } from "./report.ts";
import { limitOf } from "./social.ts";

const KEY = "FLOCK_PRIVATE_KEY";

/**
 * A Payer of "@flock/client/payments" for this one message, signing for nothing above `max` (atomic units). The price
 * is checked here first, so a refusal names --max (not the SDK's maxPerMessage) and loads no x402 package.
 */
async function payer(ctx: Ctx, max: bigint): Promise<PaymentHandler> {
  const key = ctx.env[KEY];
  if (!key)
    throw new SetupError(`${KEY} is not set`, `export ${KEY}=0x... (the paying wallet's private key) to pay`, 2);
  if (!/^0x[0-9a-fA-F]{64}$/.test(key))
    throw new SetupError(
      `${KEY} must be 0x followed by 64 hex digits`,
      `export ${KEY}=0x... (the paying wallet's private key)`,
      2,
    );
  const wallet = async (): Promise<PaymentHandler> => {
    let mods;
    try {
      mods = await loadPayments(() => Promise.all([import("viem/accounts"), import("../payments.ts")]));
    } catch (e) {
      if (!(e instanceof MissingPaymentPackagesError)) throw e;
      throw new SetupError(e.message, PAYMENT_INSTALL, 1);
    }
    const [{ privateKeyToAccount }, { Payer }] = mods;
    const cap = Number(max) / 1_000_000;
    return new Payer({ account: privateKeyToAccount(key as `0x${string}`), maxPerMessage: cap, maxPerSession: cap });
  };
  return {
    async headersFor(required, body) {
      const prices = required.accepts.filter((r) => /^\d+$/.test(r.amount)).map((r) => BigInt(r.amount));
      const cheapest = prices.reduce<bigint | undefined>((a, b) => (a === undefined || b < a ? b : a), undefined);
      if (cheapest !== undefined && cheapest > max) {
        const message = `the price (${dollars(cheapest)}) is above --max (${dollars(max)}): nothing was paid; run again with --max ${plainDollars(cheapest)} to pay it`;
        throw new PaymentRequiredError(message, required, { ...(body as object), message });
      }
      return (await wallet()).headersFor(required, body);
    },
  };
}

export const payCommands: Record<string, Command> = {
  pay: {
    usage: `pay <agent_id> <body> --max DOLLARS           send to a paid agent, paying its price up to DOLLARS (wallet key: ${KEY})`,
    flags: ["max"],
    creates: true,
    async run(ctx) {
      const [to, body] = need(ctx, ["agent_id", "body"], "pay <agent_id> <body> --max DOLLARS");
      if (ctx.flags.max === undefined)
        throw new SetupError(
          "pay needs --max DOLLARS: the most you agree to pay for this message",
          "see the price first: flockctl marketplace",
          2,
        );
      const m = await ctx
        .client({ payments: await payer(ctx, unitsOfPrice(ctx.flags.max)) })
        .send(to!, body!, {}, ctx.keyed);
      ctx.print(
        m,
        () =>
          `sent ${m.id} in ${m.thread_id}${m.payment ? `, paid ${dollars(m.payment.amount)} (tx ${m.payment.transaction})` : " (it charged nothing)"}`,
      );
    },
  },
  payments: {
    usage: "payments [--direction sent|received] [--limit N] [--before ID]",
    flags: ["direction", "limit", "before"],
    async run(ctx) {
      const page = await ctx.flock.payments({
        direction: ctx.flags.direction as "sent" | "received" | undefined,
        limit: limitOf(ctx),
        before: ctx.flags.before,
      });
      ctx.print(
        page,
        () =>
          page.payments
            .map(
              (p) =>
                `${p.created_at}  ${p.direction} ${dollars(p.amount)} ${p.direction === "sent" ? "to" : "from"} ${p.counterparty}  ${p.status}${p.transaction ? `  tx ${p.transaction}` : ""}${p.reason ? `  (${p.reason})` : ""}`,
            )
            .join("\n") || "(no payments yet)",
      );
    },
  },
};
