// The message as it is shown, read from Postgres: the one select list and joins of every statement that shows messages
// (a thread's history and its last message, a stream's backlog and gap fills, a search's hits, a replay), read into a
// MessageRow for toMessage (runtime/messaging/payload.ts); and a page of a thread's history.
import type postgres from "postgres";
import type { Sql } from "../db/client.ts";
import type { MessageRow } from "./payload.ts";

type Db = Sql | postgres.TransactionSql;

/**
 * The select list of the view of the messages row named `m` in a statement (a `messages` row, or a row of a subquery
 * with its columns): every field of a MessageRow, from the row's own columns, its sender's name and picture (none once
 * the account is gone: the sender has no foreign key) and a paid message's settled payment, read through shownJoins.
 */
export function shownColumns(sql: Db, m = "m") {
  const x = sql(m);
  return sql`${x}.id, ${x}.thread_id, ${x}.sender, shown_by.display_name as sender_name,
    shown_by.avatar_key as sender_avatar, ${x}.recipient, ${x}.body, ${x}.created_at, ${x}.attachments, ${x}.edited_at,
    ${x}.deleted_at, ${x}.reactions, ${x}.reply, shown_pay.tx_hash as pay_tx, shown_pay.network as pay_network,
    shown_pay.payer as pay_payer, shown_pay.amount::text as pay_amount, shown_pay.explorer_url as pay_explorer`;
}

/** The joins shownColumns reads for the messages row named `m`: its sender (`shown_by`) and payment (`shown_pay`). */
export function shownJoins(sql: Db, m = "m") {
  const x = sql(m);
  return sql`left join principals shown_by on shown_by.id = ${x}.sender
    left join payments shown_pay on shown_pay.message_id = ${x}.id`;
}

/**
 * Whether the messages row named `m` is a group message whose sender `me` blocked: hidden from `me` (history, search,
 * hand-outs; docs/ARCHITECTURE.md, "Blocks and mutes"). One primary-key probe, for group messages only.
 */
export function hiddenByBlock(sql: Db, me: string, m = "m") {
  const x = sql(m);
  return sql`(${x}.recipient is null and exists (select 1 from blocks hb where hb.blocker = ${me} and hb.blocked = ${x}.sender))`;
}

/**
 * A page of a thread's history as `me` reads it, newest first; one row more than asked tells whether more exist. It
 * ends at `horizon` (past retention, nothing is kept). Group messages of those `me` blocked are left out.
 */
export function history(
  sql: Sql,
  threadId: bigint,
  before: bigint | null,
  limit: number,
  horizon: bigint,
  me: string,
): Promise<MessageRow[]> {
  return sql<MessageRow[]>`
    select ${shownColumns(sql)}
    from messages m ${shownJoins(sql)}
    where m.thread_id = ${String(threadId)} and m.id >= ${String(horizon)} ${before !== null ? sql`and m.id < ${String(before)}` : sql``}
      and not ${hiddenByBlock(sql, me)}
    order by m.id desc
    limit ${limit + 1}`;
}
