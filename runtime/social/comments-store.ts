// Comments on moments in Postgres. A comment is inserted only on a moment its author may see and that is not past the
// moments horizon (runtime/retention/horizons.ts), and the moment's counter is raised (with its `rev`) in the same
// statement, so counts stay exact. The comments of a moment past the horizon are gone with it.
import type { Sql } from "../db/client.ts";
import { isFkViolation } from "../db/errors.ts";
import { blockedEitherWay, type CountsChange, visibleTo } from "./moment-reads-store.ts";

interface NewComment {
  id: bigint;
  moment: bigint;
  author: string;
  body: string;
  createdAt: Date;
}

/**
 * Stores a comment on a moment its author may see: the moment's new counts (with its author and visibility), or null when the moment is missing, past
 * `horizon`, not visible to the author, or deleted while the comment was written (a foreign-key violation).
 */
export async function insertComment(sql: Sql, c: NewComment, horizon: bigint): Promise<CountsChange | null> {
  try {
    const [r] = await sql<CountsChange[]>`
      with m as (select m.id from moments m
        where m.id = ${String(c.moment)} and m.id >= ${String(horizon)} and ${visibleTo(sql, c.author)}),
      ins as (
        insert into moment_comments (id, moment, author, body, created_at)
        select ${String(c.id)}::bigint, id, ${c.author}, ${c.body}, ${c.createdAt} from m returning moment),
      upd as (update moments set comment_count = comment_count + 1, rev = rev + 1 where id in (select moment from ins)
        returning id, like_count, comment_count, rev, author, visibility)
      select * from upd`;
    return r ?? null;
  } catch (err) {
    if (isFkViolation(err)) return null;
    throw err;
  }
}

/** A comment with its author's name; every column null in the one row that stands for a visible moment with none. */
interface CommentRow {
  id: bigint | null;
  body: string | null;
  author: string | null;
  display_name: string | null;
  avatar_key: string | null;
  created_at: Date | null;
}

/**
 * The comments of a moment `me` may see after the comment `after` (none by someone a block cuts from `me`, either
 * way: docs/ARCHITECTURE.md, "Blocks and mutes"), oldest first, at most `limit` + 1 (one more tells
 * whether more exist). No row: the moment is missing, past `horizon` or not visible to `me`; one row with null
 * comment columns: it is visible but has no (further) comments.
 */
export function commentsPage(
  sql: Sql,
  moment: bigint,
  me: string,
  page: { after: bigint; limit: number; horizon: bigint },
): Promise<CommentRow[]> {
  const { after, limit, horizon } = page;
  return sql<CommentRow[]>`
    select c.id, c.body, c.author, p.display_name, p.avatar_key, c.created_at
    from moments m
    left join lateral (
      select c.id, c.body, c.author, c.created_at from moment_comments c
      where c.moment = m.id and c.id > ${String(after)} and not ${blockedEitherWay(sql, sql`${me}`, sql`c.author`)}
      order by c.id limit ${limit + 1}) c on true
    left join principals p on p.id = c.author
    where m.id = ${String(moment)} and m.id >= ${String(horizon)} and ${visibleTo(sql, me)}
    order by c.id`;
}
