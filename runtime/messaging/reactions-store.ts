// Postgres side of reactions (docs/ARCHITECTURE.md, "Reactions"): who reacted with what, on the message row
// (messages.reactions, migration 0017: emoji -> principal ids in the order they reacted). One statement adds or
// takes back one principal's emoji under the row's lock, reading the row as it is then (two reactions at once both
// count), and answers why not otherwise.
import type { Sql } from "../db/client.ts";
import { MAX_REACTIONS } from "../../schema/messages.ts";

export type ReactOutcome =
  /** No such message within retention, or the caller is not a member of its thread. */
  | { kind: "not_found" }
  /** The message was deleted. */
  | { kind: "deleted" }
  /** A new emoji on a message that already holds MAX_REACTIONS different ones. */
  | { kind: "too_many" }
  /** Done: `changed` false when it already was so (the same reaction twice, or taking back one not there). */
  | { kind: "done"; changed: boolean; members: string[] };

/** `me` adds (`on`) or takes back its reaction `emoji` on message `id`. */
export async function react(
  sql: Sql,
  id: bigint,
  me: string,
  emoji: string,
  on: boolean,
  horizon: bigint,
): Promise<ReactOutcome> {
  const [row] = await sql<
    { found: boolean; member: boolean; deleted: boolean; full: boolean; changed: boolean; members: string[] }[]
  >`
    with m as (
      select id, thread_id, deleted_at from messages where id = ${String(id)} and id >= ${String(horizon)}
    ),
    mem as (select 1 from m join thread_members tm on tm.thread_id = m.thread_id and tm.principal = ${me}),
    upd as (
      update messages x set reactions = ${
        on
          ? sql`jsonb_set(coalesce(x.reactions, '{}'::jsonb), array[${emoji}::text], coalesce(x.reactions -> ${emoji}::text, '[]'::jsonb) || to_jsonb(${me}::text))`
          : sql`case when jsonb_array_length((x.reactions -> ${emoji}::text) - ${me}::text) = 0 then nullif(x.reactions - ${emoji}::text, '{}'::jsonb)
                     else jsonb_set(x.reactions, array[${emoji}::text], (x.reactions -> ${emoji}::text) - ${me}::text) end`
      }
      from m
      where x.id = m.id and x.deleted_at is null and exists (select 1 from mem)
        and ${
          on
            ? sql`not coalesce((x.reactions -> ${emoji}::text) ? ${me}::text, false)
                  and (x.reactions ? ${emoji}::text or (select count(*) from jsonb_object_keys(coalesce(x.reactions, '{}'::jsonb))) < ${MAX_REACTIONS})`
            : sql`coalesce((x.reactions -> ${emoji}::text) ? ${me}::text, false)`
        }
      returning x.id
    )
    select exists (select 1 from m) as found, exists (select 1 from mem) as member,
           coalesce((select deleted_at is not null from m), false) as deleted,
           coalesce((select r.reactions is not null and not (r.reactions ? ${emoji}::text)
                       and (select count(*) from jsonb_object_keys(r.reactions)) >= ${MAX_REACTIONS}
                     from messages r where r.id = ${String(id)}), false) as full,
           exists (select 1 from upd) as changed,
           array(select principal from thread_members where thread_id = (select thread_id from m)) as members`;
  if (!row?.found || !row.member) return { kind: "not_found" };
  if (row.changed) return { kind: "done", changed: true, members: row.members };
  if (row.deleted) return { kind: "deleted" };
  if (on && row.full) return { kind: "too_many" };
  return { kind: "done", changed: false, members: row.members };
}
