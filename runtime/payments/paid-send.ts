// A direct message to a paid agent (x402 v2, SPEC section 5):
//   no payment header        -> 402 with the requirements (PAYMENT-REQUIRED header and the error body)
//   payment that doesn't fit -> 402 with the reason; nothing is claimed
//   no facilitator configured -> 503 payments_unavailable; nothing is claimed (the 402 above does not need one:
//                               the requirements follow from the agent's terms alone, so what the marketplace
//                               lists always answers 402)
//   claim (network, asset, payer, nonce) in Postgres -> 409 when it is already claimed or used
//   facilitator verify       -> 402 with the reason; the claim fails but may be retried (nothing went on chain);
//                               a facilitator that does not answer: 503 payments_unavailable, also retryable
//   facilitator settle       -> 402 with the reason; the claim fails for good (it may be on chain)
//   settled                  -> the message and the settled payment in one statement (the send use case's store:
//                               runtime/messaging/send-message.ts); then its publish; 201 with `payment` and the
//                               PAYMENT-RESPONSE header.
// The send use case calls demandPayment before it makes the pair's thread, and paidSend once the message is checked.
import type { SettleResponse } from "@x402/core/types";
import { ApiError, conflict } from "../errors.ts";
import type { Ctx, Reply } from "../http/route.ts";
import type { MessageRow } from "../messaging/payload.ts";
import { publicUrl } from "../public-url.ts";
import { dollars, explorerUrl } from "./assets.ts";
import {
  checkPayment,
  headerCodec,
  paymentHeader,
  paymentRequired,
  paymentRequiredError,
  requirementsFor,
  type Terms,
} from "./protocol.ts";
import { claim, markFailed, type Settlement } from "./payments-store.ts";

/** What a paid send reads of its request: the services, the sender, the headers (the payment) and the log. */
export type PayCtx = Pick<Ctx<unknown, unknown, "principal">, "svc" | "principal" | "headers" | "log">;

/** Stores the message with its settled payment and delivers it (the answer shows `columns`); its JSON. */
export type PaidStore = (paid: Settlement, columns: Partial<MessageRow>) => Promise<string>;

const errMessage = (err: unknown) => (err instanceof Error ? err.message : String(err));

/** What a send to the paid agent `to` must satisfy: the requirements, as the 402 and the check of a payment use them. */
async function required(ctx: PayCtx, terms: Terms, to: string) {
  const codec = await headerCodec();
  const ours = requirementsFor(terms, ctx.svc.config.FLOCK_PAYMENT_TIMEOUT);
  // the resource is the send route at the configured public URL, never at the request's Host (runtime/public-url.ts)
  const pr = paymentRequired(ours, publicUrl(ctx.svc.config, ctx.svc.self, "/v1/messages"), to);
  return { codec, ours, pr };
}

/**
 * A send to a paid agent without a payment: the 402 with the requirements. Called before anything is stored (the
 * pair's direct thread included, so an unpaid attempt leaves no empty conversation behind); nothing when the request
 * carries a payment.
 */
export async function demandPayment(ctx: PayCtx, terms: Terms, to: string): Promise<void> {
  if (paymentHeader(ctx.headers)) return;
  const { codec, ours, pr } = await required(ctx, terms, to);
  throw paymentRequiredError(
    codec,
    pr,
    `agent ${to} charges $${dollars(terms.micros)} per message (${ours.amount} units of ${terms.asset.symbol} on ${ours.network}): ` +
      "sign the requirements of the PAYMENT-REQUIRED header and send again with PAYMENT-SIGNATURE",
  );
}

/**
 * A send to the paid agent `to` that carries a payment: checked, claimed, verified and settled (the steps above), then
 * `store` stores and delivers the message with its payment; 201 with its JSON and the PAYMENT-RESPONSE header.
 */
export async function paidSend(ctx: PayCtx, terms: Terms, to: string, store: PaidStore): Promise<Reply> {
  const { svc, principal } = ctx;
  await demandPayment(ctx, terms, to);
  const { codec, ours, pr } = await required(ctx, terms, to);
  const header = paymentHeader(ctx.headers)!;
  const refuse = (reason: string, message: string) =>
    paymentRequiredError(codec, { ...pr, error: reason }, `payment refused: ${message}`, reason);
  const checked = checkPayment(codec, header, ours, Math.floor(svc.now() / 1000));
  if (!checked.ok) throw refuse(checked.reason, checked.message);
  const { payload, auth, requirements } = checked;
  const facilitator = svc.facilitator;
  if (!facilitator) {
    throw new ApiError(
      "payments_unavailable",
      "payments are not configured on this server (no facilitator): nothing was charged; the authorization was not used",
    );
  }

  const paymentId = svc.ids.nextRaw();
  const claimed = await claim(svc.sql, {
    id: paymentId,
    network: ours.network,
    asset: ours.asset,
    payer: auth.from,
    nonce: auth.nonce,
    payTo: ours.payTo,
    amount: auth.value,
    priceMicros: terms.micros,
    from: principal.id,
    to,
  });
  if (claimed === null) throw conflict("this payment authorization (nonce) has already been used: sign a new one");

  // Verify: a failure here leaves nothing on chain, so the same authorization may be sent again.
  try {
    const v = await facilitator.verify(payload, requirements);
    if (!v.isValid) {
      const reason = v.invalidReason ?? "invalid_payment";
      await markFailed(svc.sql, claimed, reason, true);
      svc.metrics.payments.failed.verify.inc();
      throw refuse(reason, v.invalidMessage ?? reason);
    }
  } catch (err) {
    if (err instanceof ApiError) throw err;
    await markFailed(svc.sql, claimed, `verify_error: ${errMessage(err)}`, true);
    svc.metrics.payments.failed.verify.inc();
    ctx.log.warn({ err }, "facilitator verify failed");
    throw new ApiError(
      "payments_unavailable",
      "the payment facilitator could not verify the payment: nothing was charged; try again",
    );
  }

  // Settle: from here on the authorization may be on chain; a failed claim is never taken over again.
  let settled: SettleResponse;
  try {
    settled = await facilitator.settle(payload, requirements);
  } catch (err) {
    await markFailed(svc.sql, claimed, `settle_error: ${errMessage(err)}`, false);
    svc.metrics.payments.failed.settle.inc();
    ctx.log.error({ err, payment: claimed.toString() }, "facilitator settle failed; outcome unknown");
    throw new ApiError(
      "unavailable",
      "the payment facilitator did not confirm the settlement; its outcome is unknown (see GET /v1/payments)",
    );
  }
  if (!settled.success || !settled.transaction) {
    const reason = settled.errorReason ?? "settlement_failed";
    await markFailed(svc.sql, claimed, reason, false);
    svc.metrics.payments.failed.settle.inc();
    throw refuse(reason, settled.errorMessage?.split("\n")[0] ?? reason);
  }

  const txHash = settled.transaction;
  const explorer = explorerUrl(terms.asset, txHash);
  const payment = {
    transaction: txHash,
    network: ours.network,
    payer: auth.from,
    amount: auth.value.toString(),
    explorer_url: explorer,
  };
  const json = await store({ paymentId: claimed, txHash, explorerUrl: explorer }, paymentColumns(payment));
  svc.metrics.payments.settled.inc();
  return {
    status: 201,
    raw: { type: "application/json", data: json },
    headers: {
      "PAYMENT-RESPONSE": codec.encodePaymentResponseHeader({ ...settled, payer: settled.payer ?? auth.from }),
    },
  };
}

/** The payment as the message row's pay_* columns (what toMessage renders). */
const paymentColumns = (p: {
  transaction: string;
  network: string;
  payer: string;
  amount: string;
  explorer_url: string | null;
}) => ({
  pay_tx: p.transaction,
  pay_network: p.network,
  pay_payer: p.payer,
  pay_amount: p.amount,
  pay_explorer: p.explorer_url,
});
