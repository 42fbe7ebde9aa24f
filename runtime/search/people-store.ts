// Finding people (GET /v1/search/people): agents by name or id (an agent is public), and the persons the caller may
// see by the same: friends, and those it shares a conversation with (docs/ARCHITECTURE.md, "Search"). A person no one
// introduced is never found, so a search tells no stranger that a person exists. Whom the caller blocked is not found;
// nor is a person who blocked the caller (as a person no one introduced); an agent who did still is, as every agent
// is found by everyone, so that the search tells no one of a block (docs/ARCHITECTURE.md, "Blocks and mutes").
//
// Agents are found on indexes (schema/migrations/0023_search_indexes.sql): a text holding a run of MIN_CONTAINS letters
// or digits anywhere in a name by the trigram index, any other at the start of a name by the index on lower(display_name),
// an id by the primary key; and at most AGENT_CANDIDATES names starting with the text and as many containing it are
// ranked, so a text that matches
// half the fleet ("agent") costs a bounded read, not a sort of every agent.
import type { TransactionSql } from "postgres";
import type { Person } from "../../schema/search.ts";
import { avatarPath } from "../../schema/avatar-path.ts";
import { containing, startingWith } from "../db/like.ts";

/**
 * The shortest text found anywhere in a name: a run of three letters or digits (a trigram the index holds). A text
 * without one ("ab", "a.b", "!!!", an emoji) has no trigram to look up, and the trigram index would be read whole,
 * so it is found at the start of a name instead.
 */
export const MIN_CONTAINS = 3;
const HAS_TRIGRAM = new RegExp(`[\\p{L}\\p{N}]{${MIN_CONTAINS}}`, "u");
/** Names starting with the text, and names containing it, read to rank (the exact matches are always read). */
export const AGENT_CANDIDATES = 500;

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
export async function findPeople(tx: TransactionSql, me: string, q: string, limit: number): Promise<Person[]> {
  const matchName = HAS_TRIGRAM.test(q)
    ? tx`p.display_name ilike ${containing(q)}`
    : tx`lower(p.display_name) like ${startingWith(q.toLowerCase())}`;
  const rows = await tx<PersonRow[]>`
    with known as (
      select friend as id from friendships where principal = ${me}
      union
      select tm2.principal from thread_members tm join thread_members tm2 on tm2.thread_id = tm.thread_id where tm.principal = ${me}
    ),
    hits as (
      select p.id, p.display_name, p.avatar_key, p.kind from principals p
      where p.kind = 'agent' and (lower(p.display_name) = lower(${q}) or p.id = ${q})
      union
      (select p.id, p.display_name, p.avatar_key, p.kind from principals p
       where p.kind = 'agent' and lower(p.display_name) like ${startingWith(q.toLowerCase())}
       limit ${AGENT_CANDIDATES})
      union
      (select p.id, p.display_name, p.avatar_key, p.kind from principals p
       where p.kind = 'agent' and ${matchName}
       limit ${AGENT_CANDIDATES})
      union
      select p.id, p.display_name, p.avatar_key, p.kind from known k join principals p on p.id = k.id
      where p.kind = 'human' and (p.display_name ilike ${containing(q)} or p.id = ${q})
    )
    select h.id, h.display_name, h.avatar_key, h.kind,
      exists (select 1 from friendships f where f.principal = ${me} and f.friend = h.id) as friend
    from hits h
    where h.id <> ${me}
      and not exists (select 1 from blocks b where b.blocker = ${me} and b.blocked = h.id)
      and not (h.kind = 'human' and exists (select 1 from blocks b where b.blocker = h.id and b.blocked = ${me}))
    order by case when lower(h.display_name) = lower(${q}) or h.id = ${q} then 0
                  when h.display_name ilike ${startingWith(q)} then 1 else 2 end,
             friend desc, lower(h.display_name), h.id
    limit ${limit}`;
  return rows.map(({ avatar_key, ...r }) => ({ ...r, avatar_url: avatarPath(avatar_key) }));
}
