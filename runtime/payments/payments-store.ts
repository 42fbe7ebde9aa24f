// Postgres side of payments: claiming an authorization (unique per network, asset, payer and nonce), marking a
// claim failed or settled (a settled one together with its message, in the statement that stores it:
// runtime/messaging/messages-store.ts insertPaidDirect), and the payments a principal sent or received.
import type { Sql } from "../db/client.ts";

interface Claim {
  id: bigint;
  network: string;
  asset: string;
  payer: string;
  nonce: string;
  payTo: string;
  amount: bigint;
  priceMicros: bigint;
  from: string;
  to: string;
}

/**
 * Claims an authorization. True when this request now owns it: a fresh claim, or a take-over of a claim that
 * failed verification before any settlement (retryable). False when it is claimed, settled, or failed after a
 * settlement attempt: a reused nonce. Concurrent claims of one authorization: exactly one wins.
 */
export async function claim(sql: Sql, c: Claim): Promise<bigint | null> {
  const [row] = await sql<{ id: bigint | null }[]>`
    with ins as (
      insert into payments (id, network, asset, payer, nonce, pay_to, amount, price_micros, from_principal, to_principal, status)
      values (${String(c.id)}, ${c.network}, ${c.asset.toLowerCase()}, ${c.payer.toLowerCase()}, ${c.nonce.toLowerCase()},
              ${c.payTo.toLowerCase()}, ${c.amount.toString()}, ${String(c.priceMicros)}, ${c.from}, ${c.to}, 'claimed')
      on conflict (network, asset, payer, nonce) do nothing
      returning id
    ),
    retake as (
      update payments set status = 'claimed', retryable = false, reason = null, pay_to = ${c.payTo.toLowerCase()},
        amount = ${c.amount.toString()}, price_micros = ${String(c.priceMicros)}, from_principal = ${c.from},
        to_principal = ${c.to}, updated_at = now()
      where network = ${c.network} and asset = ${c.asset.toLowerCase()} and payer = ${c.payer.toLowerCase()}
        and nonce = ${c.nonce.toLowerCase()} and status = 'failed' and retryable and not exists (select 1 from ins)
      returning id
    )
    select coalesce((select id from ins), (select id from retake)) as id`;
  return row?.id ?? null;
}

/** Marks a claim failed; `retryable` when no settlement was attempted (the authorization may come again). */
export async function markFailed(sql: Sql, id: bigint, reason: string, retryable: boolean): Promise<void> {
  await sql`
    update payments set status = 'failed', retryable = ${retryable}, reason = ${reason.slice(0, 500)}, updated_at = now()
    where id = ${String(id)} and status = 'claimed'`;
}

/** A payment settled on chain: its claim, its transaction, and where an explorer shows it. */
export interface Settlement {
  paymentId: bigint;
  txHash: string;
  explorerUrl: string | null;
}

/**
 * The update that marks a claim settled, with its message: the CTE named `message` that stores it (its id; the
 * statement of runtime/messaging/messages-store.ts insertPaidDirect), or none when its recipient's account went.
 */
export function settledUpdate(sql: Sql, s: Settlement, message?: string) {
  return sql`
    update payments set status = 'settled', tx_hash = ${s.txHash}, explorer_url = ${s.explorerUrl}, reason = null,
      retryable = false, ${message === undefined ? sql`` : sql`message_id = (select id from ${sql(message)}),`} updated_at = now()
    where id = ${String(s.paymentId)}`;
}

interface PaymentRow {
  id: bigint;
  network: string;
  asset: string;
  payer: string;
  pay_to: string;
  amount: string;
  price_micros: bigint;
  from_principal: string;
  to_principal: string;
  status: "claimed" | "settled" | "failed";
  reason: string | null;
  tx_hash: string | null;
  explorer_url: string | null;
  message_id: bigint | null;
  created_at: Date;
}

/** A page of the payments `me` sent or received, newest first (one row more than asked tells has_more). */
export function listPayments(
  sql: Sql,
  me: string,
  direction: "sent" | "received" | undefined,
  before: bigint | null,
  limit: number,
) {
  const who =
    direction === "sent"
      ? sql`from_principal = ${me}`
      : direction === "received"
        ? sql`to_principal = ${me}`
        : sql`(from_principal = ${me} or to_principal = ${me})`;
  return sql<PaymentRow[]>`
    select id, network, asset, payer, pay_to, amount::text as amount, price_micros, from_principal, to_principal,
           status, reason, tx_hash, explorer_url, message_id, created_at
    from payments
    where ${who} ${before !== null ? sql`and id < ${String(before)}` : sql``}
    order by id desc
    limit ${limit + 1}`;
}
