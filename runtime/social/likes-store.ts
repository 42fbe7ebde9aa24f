// The statement behind likes and unlikes (runtime/social/likes.ts batches them): a whole batch in one statement,
// which inserts (or deletes) the like rows of the moments each liker may see and moves each moment's counter by the
// number of rows that actually changed, raising its `rev` (see runtime/engines/moments.ts).
import type { Sql } from "../db/client.ts";
import { type CountsChange, visibleToViewer } from "./moment-reads-store.ts";

/** A principal's like of a moment. */
export interface LikePair {
  moment: bigint;
  principal: string;
}

export type LikeKind = "like" | "unlike";

/**
 * One pair's answer: whether the moment is visible to its principal, and the moment's counts with its author and
 * visibility (id null: unchanged).
 */
export interface Reacted extends Omit<CountsChange, "id"> {
  found: boolean;
  id: bigint | null;
}

/** Likes (or unlikes) every pair in one statement: per pair, in order, its Reacted row. */
export async function react(sql: Sql, kind: LikeKind, items: LikePair[]): Promise<Reacted[]> {
  const change =
    kind === "like"
      ? sql`insert into moment_likes (moment, principal) select moment, principal from vis
            on conflict do nothing returning moment`
      : sql`delete from moment_likes l using vis where l.moment = vis.moment and l.principal = vis.principal
            returning l.moment`;
  const sign = kind === "like" ? sql`+` : sql`-`;
  return sql<Reacted[]>`
    with req as (
      select * from unnest(${items.map((i) => String(i.moment))}::bigint[], ${items.map((i) => i.principal)}::text[])
        with ordinality as r(moment, principal, ord)),
    vis as (
      select r.ord, r.moment, r.principal from req r join moments m on m.id = r.moment
      where ${visibleToViewer(sql, sql`r.principal`)}),
    changed as (${change}),
    n as (select moment, count(*)::int as n from changed group by moment),
    upd as (
      update moments m set like_count = m.like_count ${sign} n.n, rev = m.rev + 1 from n where m.id = n.moment
      returning m.id, m.like_count, m.comment_count, m.rev, m.author, m.visibility)
    select (v.ord is not null) as found, upd.id, upd.like_count, upd.comment_count, upd.rev, upd.author, upd.visibility
    from req r left join vis v on v.ord = r.ord left join upd on upd.id = r.moment
    order by r.ord`;
}
