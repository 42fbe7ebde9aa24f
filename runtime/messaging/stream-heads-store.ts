// The newest number of many streams at once, as Postgres holds it (an inbox's `inboxes.last_seq`, a group's
// `groups.last_seq`): what a node's position check (runtime/messaging/position-check.ts) compares with the numbers it
// published or saw, to find a message whose publish never came (its node died after the commit, or Redis failed it).
import type { Sql } from "../db/client.ts";
import { groupOf, groupStream, inboxStream, type StreamId } from "./stream-id.ts";

/**
 * The newest number of each of `streams`, in one statement (primary-key lookups: an inbox by its principal, a group
 * by its id). A stream that has no number yet (an inbox never written to, a group gone) is absent.
 */
export async function streamHeads(sql: Sql, streams: StreamId[]): Promise<Map<StreamId, number>> {
  const inboxes: string[] = [];
  const groups: string[] = [];
  for (const s of streams) {
    const g = groupOf(s);
    if (g === undefined) inboxes.push(s);
    else groups.push(String(g));
  }
  const out = new Map<StreamId, number>();
  if (streams.length === 0) return out;
  const rows = await sql<{ principal: string | null; group_id: string | null; last: string }[]>`
    select i.principal, null::text as group_id, i.last_seq::text as last
    from inboxes i where i.principal = any(${inboxes}::text[])
    union all
    select null, g.id::text, g.last_seq::text from groups g where g.id = any(${groups}::bigint[])`;
  for (const r of rows) {
    const key = r.principal !== null ? inboxStream(r.principal) : groupStream(BigInt(r.group_id!));
    out.set(key, Number(r.last));
  }
  return out;
}
