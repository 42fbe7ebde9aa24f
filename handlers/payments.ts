// GET /v1/payments: the payments the caller sent or received (x402 paid messages), newest first, with their
// status (claimed, settled, failed), transaction and message.
import { invalid } from "../runtime/errors.ts";
import { defineRoute, ok, type Route } from "../runtime/http/route.ts";
import { PREFIX, parseId } from "../runtime/ids.ts";
import { dollars } from "../runtime/payments/assets.ts";
import { listPayments } from "../runtime/payments/payments-store.ts";
import { PaymentsQuery } from "../schema/payments.ts";
import { getAddress } from "../runtime/address.ts";

const list = defineRoute({
  method: "GET",
  path: "/v1/payments",
  auth: "principal",
  scope: "read",
  query: PaymentsQuery,
  async handle({ query, principal, svc }) {
    let before: bigint | null = null;
    if (query.before !== undefined) {
      before = parseId("payment", query.before);
      if (before === null) throw invalid("before: must be a payment id", { field: "before" });
    }
    const rows = await listPayments(svc.sql, principal.id, query.direction, before, query.limit);
    const page = rows.slice(0, query.limit);
    return ok({
      payments: page.map((r) => {
        const sent = r.from_principal === principal.id;
        const asset = svc.assets.get(r.network);
        return {
          id: PREFIX.payment + r.id.toString(),
          direction: sent ? "sent" : "received",
          status: r.status,
          counterparty: sent ? r.to_principal : r.from_principal,
          network: r.network,
          asset: getAddress(r.asset),
          asset_symbol: asset && asset.address.toLowerCase() === r.asset ? asset.symbol : null,
          payer: getAddress(r.payer),
          pay_to: getAddress(r.pay_to),
          amount: r.amount,
          price: dollars(r.price_micros),
          transaction: r.tx_hash,
          explorer_url: r.explorer_url,
          message_id: r.message_id === null ? null : PREFIX.message + r.message_id.toString(),
          reason: r.reason,
          created_at: r.created_at.toISOString(),
        };
      }),
      has_more: rows.length > query.limit,
    });
  },
});

export const paymentRoutes: Route[] = [list];
