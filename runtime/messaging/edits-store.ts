// Postgres side of edits and deletes (docs/ARCHITECTURE.md, "Edits and deletes"): the sender changes a message's
// body within EDIT_WINDOW_MS of sending it, or deletes it (a tombstone stays: body emptied, files no longer carried by
// it, a replay of its send answering it as deleted). One statement
// each: it checks what the caller may do and does it, and answers why not otherwise.
import type { Sql } from "../db/client.ts";

/** How long after sending a sender may still change a message's body: 48 hours (deleting has no limit). */
export const EDIT_WINDOW_MS = 48 * 60 * 60 * 1000;

export type ChangeOutcome =
  /** No such message within retention, or the caller is not a member of its thread. */
  | { kind: "not_found" }
  /** A member who did not send it. */
  | { kind: "not_sender" }
  /** An edit of a deleted message. */
  | { kind: "deleted" }
  /** An edit past EDIT_WINDOW_MS. */
  | { kind: "too_old" }
  /** Done (or, for a delete, done before: `changed` false). `members`: the thread's, the caller included. */
  | { kind: "done"; changed: boolean; members: string[] };

interface Row {
  sender: string | null;
  member: boolean;
  deleted: boolean;
  old: boolean;
  changed: boolean;
  members: string[];
}

function outcome(row: Row | undefined, me: string, edit: boolean): ChangeOutcome {
  if (!row || row.sender === null || !row.member) return { kind: "not_found" };
  if (row.sender !== me) return { kind: "not_sender" };
  if (edit && row.deleted) return { kind: "deleted" };
  if (edit && row.old) return { kind: "too_old" };
  return { kind: "done", changed: row.changed, members: row.members };
}

/** The sender `me` changes the body of message `id` (at `now`), within the window and while it is not deleted. */
export async function editMessage(
  sql: Sql,
  id: bigint,
  me: string,
  body: string,
  now: Date,
  horizon: bigint,
): Promise<ChangeOutcome> {
  const since = new Date(now.getTime() - EDIT_WINDOW_MS);
  const [row] = await sql<Row[]>`
    with m as (
      select id, thread_id, sender, created_at, deleted_at from messages where id = ${String(id)} and id >= ${String(horizon)}
    ),
    mem as (select 1 from m join thread_members tm on tm.thread_id = m.thread_id and tm.principal = ${me}),
    upd as (
      update messages x set body = ${body}, edited_at = ${now}
      from m
      where x.id = m.id and m.sender = ${me} and m.deleted_at is null and m.created_at >= ${since} and exists (select 1 from mem)
      returning x.id
    )
    select (select sender from m) as sender, exists (select 1 from mem) as member,
           coalesce((select deleted_at is not null from m), false) as deleted,
           coalesce((select created_at < ${since} from m), false) as old,
           exists (select 1 from upd) as changed,
           array(select principal from thread_members where thread_id = (select thread_id from m)) as members`;
  return outcome(row, me, true);
}

/**
 * The sender `me` deletes message `id` (at `now`): its body and files go from every answer, the files it carried
 * are no longer carried by it (message_files: each recipient still reads a file while another kept message of a
 * thread it is in carries it, runtime/files/records.ts), the replies to it in the thread keep who wrote it but not
 * what (their quote's body emptied, `deleted` true), and the answer kept for the Idempotency-Key it was sent with
 * becomes the message as deleted (no body, files, quote nor reactions), so a replay of the send answers that.
 * Deleting a deleted message changes nothing (`changed` false).
 */
export async function deleteMessage(
  sql: Sql,
  id: bigint,
  me: string,
  now: Date,
  horizon: bigint,
): Promise<ChangeOutcome> {
  const [row] = await sql<Row[]>`
    with m as (
      select id, thread_id, sender, deleted_at, attachments, idempotency_key from messages where id = ${String(id)} and id >= ${String(horizon)}
    ),
    mem as (select 1 from m join thread_members tm on tm.thread_id = m.thread_id and tm.principal = ${me}),
    upd as (
      update messages x set deleted_at = ${now}
      from m
      where x.id = m.id and m.sender = ${me} and m.deleted_at is null and exists (select 1 from mem)
      returning x.id, m.thread_id, m.attachments, m.idempotency_key
    ),
    files as (
      select upd.thread_id, substr(a ->> 'id', 6)::bigint as file_id
      from upd, jsonb_array_elements(coalesce(upd.attachments, '[]'::jsonb)) a
    ),
    uncarried as (
      delete from message_files mf using files f
      where mf.file_id = f.file_id and mf.thread_id = f.thread_id and mf.message_id = ${String(id)}
      returning 1
    ),
    quotes as (
      update messages q set reply = jsonb_set(q.reply, '{body}', '""'::jsonb) || '{"deleted": true}'::jsonb
      from upd
      where q.thread_id = upd.thread_id and q.reply is not null and q.reply ->> 'id' = ${"msg_" + String(id)}
      returning 1
    ),
    kept as (
      update idempotency_keys k set body = ${keptWithoutBody(sql, now)}
      from upd
      where k.principal = ${me} and k.key = upd.idempotency_key and k.status = 201
        and left(k.body, ${keptPrefix(id).length}::int) = ${keptPrefix(id)}
      returning 1
    )
    select (select sender from m) as sender, exists (select 1 from mem) as member,
           coalesce((select deleted_at is not null from m), false) as deleted, false as old,
           exists (select 1 from upd) as changed,
           array(select principal from thread_members where thread_id = (select thread_id from m)) as members,
           (select count(*) from uncarried) as uncarried, (select count(*) from quotes) as quotes, (select count(*) from kept) as kept`;
  return outcome(row, me, false);
}

/**
 * The answer kept for a send's Idempotency-Key (idempotency_keys.body of `k`, runtime/http/idempotency.ts: the message
 * as its send answered it), as a replay answers it once the message is gone: no body, files, quote nor reactions,
 * and `deleted_at` when it was deleted (null: it went past retention). The statement using it checks that the body
 * is that message's (it starts with keptPrefix: a key may be used again once its 24 hours are over), so the cast
 * reads only a message's JSON.
 */
export function keptWithoutBody(sql: Sql, deletedAt: Date | null) {
  const removed = sql`(k.body::jsonb - 'attachments' - 'reply_to' - 'reactions' - 'edited_at') || jsonb_build_object('body', '')`;
  return deletedAt === null
    ? sql`(${removed})::text`
    : sql`(${removed} || jsonb_build_object('deleted_at', ${deletedAt.toISOString()}::text))::text`;
}

/** How the answer kept for the send of message `id` starts (its JSON's first field is the id: payload.ts toMessage). */
export const keptPrefix = (id: bigint) => `{"id":"msg_${id.toString()}"`;
