// Postgres side of replies (docs/ARCHITECTURE.md, "Replies"): the quote a reply carries, read from the message it
// answers when it is sent (a delete empties the quotes of it: runtime/messaging/edits-store.ts).
import { avatarPath } from "../accounts/avatar-path.ts";
import type { Sql } from "../db/client.ts";
import { PREFIX } from "../ids.ts";
import { DELETED_NAME } from "./payload.ts";
import type { Quote } from "../../schema/messages.ts";

/** A quote keeps this many characters (code points) of the message it answers. */
export const QUOTE_CHARS = 200;

/**
 * The quote of message `id` of thread `thread` (a group's, or the direct thread of a pair, by its key), within
 * retention and not deleted, as a reply sent now carries it; null when there is no such message in that thread.
 */
export async function quoteOf(sql: Sql, thread: bigint | { pair: string }, id: bigint, horizon: bigint): Promise<Quote | null> {
  // a direct thread is found by its pair before a send makes it (a reply refused must not leave one behind)
  const inThread = typeof thread === "bigint" ? sql`m.thread_id = ${String(thread)}` : sql`m.thread_id = (select t.id from threads t where t.pair_key = ${thread.pair})`;
  const [row] = await sql<{ sender: string; name: string | null; avatar_key: string | null; body: string }[]>`
    select m.sender, p.display_name as name, p.avatar_key, m.body from messages m left join principals p on p.id = m.sender
    where m.id = ${String(id)} and ${inThread} and m.id >= ${String(horizon)} and m.deleted_at is null`;
  if (!row) return null;
  return { id: PREFIX.message + id.toString(), from: { id: row.sender, display_name: row.name ?? DELETED_NAME, avatar_url: avatarPath(row.avatar_key) }, body: [...row.body].slice(0, QUOTE_CHARS).join("") };
}
