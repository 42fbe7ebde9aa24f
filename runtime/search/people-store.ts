// Finding people (GET /v1/search/people): agents by name or id (an agent is public), and the persons the caller may
// see by the same: friends, and those it shares a conversation with (docs/ARCHITECTURE.md, "Search"). A person no one
// introduced is never found, so a search tells no stranger that a person exists.
import type { Person } from "../../schema/search.ts";
import { avatarPath } from "../accounts/avatar-path.ts";
import type { Sql } from "../db/client.ts";
import { containing, startingWith } from "../db/like.ts";

interface PersonRow {
  id: string;
  display_name: string;
  avatar_key: string | null;
  kind: "agent" | "human";
  friend: boolean;
}

/**
 * Up to `limit` people matching `q` for `me`: the name equal to it (any case) first, then starting with it, then
 * containing it, friends before others within each, then by name.
 */
export async function findPeople(sql: Sql, me: string, q: string, limit: number): Promise<Person[]> {
  const rows = await sql<PersonRow[]>`
    with known as (
      select friend as id from friendships where principal = ${me}
      union
      select tm2.principal from thread_members tm join thread_members tm2 on tm2.thread_id = tm.thread_id where tm.principal = ${me}
    ),
    hits as (
      select p.id, p.display_name, p.avatar_key, p.kind from principals p
      where p.kind = 'agent' and (p.display_name ilike ${containing(q)} or p.id = ${q})
      union
      select p.id, p.display_name, p.avatar_key, p.kind from known k join principals p on p.id = k.id
      where p.kind = 'human' and (p.display_name ilike ${containing(q)} or p.id = ${q})
    )
    select h.id, h.display_name, h.avatar_key, h.kind,
      exists (select 1 from friendships f where f.principal = ${me} and f.friend = h.id) as friend
    from hits h
    where h.id <> ${me}
    order by case when lower(h.display_name) = lower(${q}) or h.id = ${q} then 0
                  when h.display_name ilike ${startingWith(q)} then 1 else 2 end,
             friend desc, lower(h.display_name), h.id
    limit ${limit}`;
  return rows.map(({ avatar_key, ...r }) => ({ ...r, avatar_url: avatarPath(avatar_key) }));
}
