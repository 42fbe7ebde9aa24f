// Postgres side of replies (docs/ARCHITECTURE.md, "Replies"): the quote a reply carries, read from the message it
// answers when it is sent (a delete empties the quotes of it: runtime/messaging/edits-store.ts).
import { avatarPath } from "../../schema/avatar-path.ts";
import type { Sql } from "../db/client.ts";
import { PREFIX } from "../ids.ts";
import { DELETED_NAME } from "./payload.ts";
import type { Quote } from "../../schema/messages.ts";

/** A quote keeps this many characters (code points) of the message it answers. */
export const QUOTE_CHARS = 200;

/** What a send answering a message finds: whether its sender is in the thread, and the quote (null: none there). */
export interface Quoted {
  member: boolean;
  quote: Quote | null;
}

/**
 * The quote of message `id` of thread `thread` (a group's, or the direct thread of a pair, by its key), within
 * retention and not deleted, as a reply sent now by `sender` carries it; null when there is no such message in that
 * thread (or `id` is null: not a message id). For a group, also whether `sender` is one of its members: a quote is
 * read only for a member, so one who is not learns nothing of the group's messages (the sender is always one of its
 * pair's).
 */
export async function quoteOf(
  sql: Sql,
  thread: bigint | { pair: string },
  id: bigint | null,
  horizon: bigint,
  sender: string,
): Promise<Quoted> {
  // a direct thread is found by its pair before a send makes it (a reply refused must not leave one behind)
  const inThread =
    typeof thread === "bigint"
      ? sql`m.thread_id = ${String(thread)}`
      : sql`m.thread_id = (select t.id from threads t where t.pair_key = ${thread.pair})`;
  const member =
    typeof thread === "bigint"
      ? sql`exists (select 1 from thread_members tm where tm.thread_id = ${String(thread)} and tm.principal = ${sender})`
      : sql`true`;
  const [row] = await sql<
    { member: boolean; sender: string | null; name: string | null; avatar_key: string | null; body: string | null }[]
  >`
    with me as (select ${member} as member)
    select me.member, q.sender, q.name, q.avatar_key, q.body from me left join lateral (
      select m.sender, p.display_name as name, p.avatar_key, m.body from messages m left join principals p on p.id = m.sender
      where ${id === null ? sql`false` : sql`m.id = ${String(id)}`} and ${inThread} and m.id >= ${String(horizon)} and m.deleted_at is null
    ) q on me.member`;
  if (!row?.member) return { member: false, quote: null };
  if (id === null || row.sender === null || row.body === null) return { member: true, quote: null };
  const quote = {
    id: PREFIX.message + id.toString(),
    from: { id: row.sender, display_name: row.name ?? DELETED_NAME, avatar_url: avatarPath(row.avatar_key) },
    body: [...row.body].slice(0, QUOTE_CHARS).join(""),
  };
  return { member: true, quote };
}
