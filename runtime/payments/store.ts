// Postgres side of payments: claiming an authorization (unique per network, asset, payer and nonce), marking
// a claim failed, and completing a settled payment together with its message in one statement, so a message
// is never stored without its settled payment nor a payment marked settled without its message.
import type { Sql } from "../db/client.ts";
import { isFkViolation } from "../db/errors.ts";
import type { StoredAttachment } from "../messaging/payload.ts";
import type { Quote } from "../../schema/messages.ts";

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

interface Settled {
  paymentId: bigint;
  txHash: string;
  explorerUrl: string | null;
  message: {
    id: bigint;
    threadId: bigint;
    sender: string;
    recipient: string;
    body: string;
    createdAt: Date;
    attachments?: StoredAttachment[];
    idempotencyKey?: string;
    reply?: Quote;
  };
}

/**
 * After settlement: store the message, numbered in the recipient's inbox, share the files it carries with the
 * recipient, and mark the payment settled (with the transaction and the message) in one statement. Its number in the
 * inbox; null when the recipient's account is gone: the payment is still recorded as settled, without a message.
 */
export async function completeSettled(sql: Sql, s: Settled): Promise<number | null> {
  const m = s.message;
  const files = m.attachments ?? [];
  try {
    const [row] = await sql<{ seq: string | null }[]>`
      with r as (select id from principals where id = ${m.recipient}),
      m as (
        insert into messages (id, thread_id, sender, recipient, body, created_at, attachments, seq, idempotency_key, reply)
        select ${String(m.id)}, ${String(m.threadId)}, ${m.sender}, ${m.recipient}, ${m.body}, ${m.createdAt.toISOString()},
          ${files.length > 0 ? JSON.stringify(files) : null}::text::jsonb, flock_inbox_take(r.id, 1), ${m.idempotencyKey ?? null},
          ${m.reply ? JSON.stringify(m.reply) : null}::text::jsonb from r
        returning id, seq
      ),
      carried as (
        select f.id as file_id from m, files f
        where f.id = any(${files.map((a) => a.id.slice("file_".length))}::bigint[]) and f.owner = ${m.sender}
      ),
      mf as (
        insert into message_files (file_id, thread_id, message_id)
        select file_id, ${String(m.threadId)}, ${String(m.id)} from carried
        on conflict do nothing
      ),
      s as (
        insert into file_shares (file_id, principal, thread_id)
        select file_id, ${m.recipient}, ${String(m.threadId)} from carried
        on conflict do nothing
      ),
      u as (
        update payments set status = 'settled', tx_hash = ${s.txHash}, explorer_url = ${s.explorerUrl}, reason = null, retryable = false,
          message_id = (select id from m), updated_at = now()
        where id = ${String(s.paymentId)}
      )
      select (select seq from m) as seq`;
    return row?.seq == null ? null : Number(row.seq);
  } catch (err) {
    if (!isFkViolation(err)) throw err;
    await sql`
      update payments set status = 'settled', tx_hash = ${s.txHash}, explorer_url = ${s.explorerUrl}, reason = null, retryable = false, updated_at = now()
      where id = ${String(s.paymentId)}`;
    return null;
  }
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
