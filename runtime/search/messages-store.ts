// Finding messages (GET /v1/search/messages): Postgres full-text search (the `simple` configuration: words as
// written, any language) over the messages of the caller's own threads, within retention and not deleted, newest
// first (docs/ARCHITECTURE.md, "Search"). What the caller could not read in history it cannot find (group messages
// of those it blocked among them).
//
// The match is written exactly as the GIN index `messages_words_idx` is built (to_tsvector('simple', body),
// schema/migrations/0023_search_indexes.sql), and it is asked of each of the caller's threads on its own (the lateral
// join), newest first, a page at most: for each thread the planner takes the messages holding the words from the
// index and keeps that thread's (a rare word: 0.4-1 ms over 200,000 messages), or walks the thread newest first by
// (thread_id, id) and tests each message's words until it has a page (a common word: 0.3-5 ms), whichever the words'
// statistics say is cheaper. Asked of all threads at once, it walked every message newest first, the other
// principals' too, testing each (90 ms for the commonest word). runtime/search/bounded.ts bounds either.
import type { TransactionSql } from "postgres";
import { hiddenByBlock, shownColumns, shownJoins } from "../messaging/message-view-store.ts";
import type { MessageRow } from "../messaging/payload.ts";

/** A page of `me`'s messages matching `q` (websearch syntax), older than `before`; one row more tells of more. */
export function searchMessages(
  tx: TransactionSql,
  me: string,
  q: string,
  before: bigint | null,
  limit: number,
  horizon: bigint,
): Promise<MessageRow[]> {
  return tx<MessageRow[]>`
    select ${shownColumns(tx)}
    from thread_members tm
      cross join lateral (
        select x.id, x.thread_id, x.sender, x.recipient, x.body, x.created_at, x.attachments, x.edited_at, x.deleted_at, x.reactions, x.reply
        from messages x
        where x.thread_id = tm.thread_id and x.id >= ${String(horizon)} and x.deleted_at is null and x.seq is not null
          ${before !== null ? tx`and x.id < ${String(before)}` : tx``}
          and to_tsvector('simple', x.body) @@ websearch_to_tsquery('simple', ${q})
          and not ${hiddenByBlock(tx, me, "x")}
        order by x.id desc
        limit ${limit + 1}
      ) m
      ${shownJoins(tx)}
    where tm.principal = ${me}
    order by m.id desc
    limit ${limit + 1}`;
}
