// Finding messages (GET /v1/search/messages): Postgres full-text search (the `simple` configuration: words as
// written, any language) over the messages of the caller's own threads, within retention and not deleted, newest
// first (docs/ARCHITECTURE.md, "Search"). What the caller could not read in history it cannot find.
import type { Sql } from "../db/client.ts";
import type { MessageRow } from "../messaging/payload.ts";

/** A page of `me`'s messages matching `q` (websearch syntax), older than `before`; one row more tells of more. */
export function searchMessages(sql: Sql, me: string, q: string, before: bigint | null, limit: number, horizon: bigint): Promise<MessageRow[]> {
  return sql<MessageRow[]>`
    select m.id, m.thread_id, m.sender, p.display_name as sender_name, p.avatar_key as sender_avatar, m.recipient, m.body, m.created_at, m.attachments,
           m.edited_at, m.deleted_at, m.reactions, m.reply, pay.tx_hash as pay_tx, pay.network as pay_network,
           pay.payer as pay_payer, pay.amount::text as pay_amount, pay.explorer_url as pay_explorer
    from thread_members tm
      join messages m on m.thread_id = tm.thread_id
      left join principals p on p.id = m.sender
      left join payments pay on pay.message_id = m.id
    where tm.principal = ${me} and m.id >= ${String(horizon)} and m.deleted_at is null and m.seq is not null
      ${before !== null ? sql`and m.id < ${String(before)}` : sql``}
      and to_tsvector('simple', m.body) @@ websearch_to_tsquery('simple', ${q})
    order by m.id desc
    limit ${limit + 1}`;
}
