// Postgres side of edits and deletes (docs/ARCHITECTURE.md, "Edits and deletes"): the sender changes a message's
// body within EDIT_WINDOW_MS of sending it, or deletes it (a tombstone stays: body emptied, files no longer carried,
// and the shares it gave taken back unless another message of the thread still carries the file). One statement
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
export async function editMessage(sql: Sql, id: bigint, me: string, body: string, now: Date, horizon: bigint): Promise<ChangeOutcome> {
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
 * The sender `me` deletes message `id` (at `now`): its body and files go from every answer, each other member
 * loses the share of a file it carried unless another message of the thread not deleted still carries that file, and
 * the replies to it in the thread keep who wrote it but not what (their quote's body emptied, `deleted` true).
 * Deleting a deleted message changes nothing (`changed` false).
 */
export async function deleteMessage(sql: Sql, id: bigint, me: string, now: Date, horizon: bigint): Promise<ChangeOutcome> {
  const [row] = await sql<Row[]>`
    with m as (
      select id, thread_id, sender, deleted_at, attachments from messages where id = ${String(id)} and id >= ${String(horizon)}
    ),
    mem as (select 1 from m join thread_members tm on tm.thread_id = m.thread_id and tm.principal = ${me}),
    upd as (
      update messages x set deleted_at = ${now}
      from m
      where x.id = m.id and m.sender = ${me} and m.deleted_at is null and exists (select 1 from mem)
      returning x.id, m.thread_id, m.attachments
    ),
    files as (
      select upd.thread_id, (a->>'id') as file from upd, jsonb_array_elements(coalesce(upd.attachments, '[]'::jsonb)) a
    ),
    revoked as (
      delete from file_shares fs
      using files f, thread_members tm
      where tm.thread_id = f.thread_id and tm.principal <> ${me}
        and fs.file_id = substr(f.file, 6)::bigint and fs.principal = tm.principal
        and not exists (
          select 1 from messages o
          where o.thread_id = f.thread_id and o.id <> ${String(id)} and o.deleted_at is null and o.attachments is not null
            and o.attachments @> jsonb_build_array(jsonb_build_object('id', f.file))
        )
      returning 1
    ),
    quotes as (
      update messages q set reply = jsonb_set(q.reply, '{body}', '""'::jsonb) || '{"deleted": true}'::jsonb
      from upd
      where q.thread_id = upd.thread_id and q.reply is not null and q.reply ->> 'id' = ${"msg_" + String(id)}
      returning 1
    )
    select (select sender from m) as sender, exists (select 1 from mem) as member,
           coalesce((select deleted_at is not null from m), false) as deleted, false as old,
           exists (select 1 from upd) as changed,
           array(select principal from thread_members where thread_id = (select thread_id from m)) as members,
           (select count(*) from revoked) as revoked, (select count(*) from quotes) as quotes`;
  return outcome(row, me, false);
}
