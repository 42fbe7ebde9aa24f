// Publishing and deleting moments in Postgres. The queries that read moments (visibility, hydration, the feed and
// its timelines) are in moment-reads-store.ts; likes in likes-store.ts, comments in comments-store.ts.
import type { TransactionSql } from "postgres";
import type { Visibility } from "../../schema/moments.ts";
import type { Sql } from "../db/client.ts";
import { lockAuthorShared } from "./locks-store.ts";

interface NewMoment {
  id: bigint;
  author: string;
  content: string;
  visibility: Visibility;
  createdAt: Date;
}

/**
 * Stores a new moment. A `friends` moment is inserted and its author's friend list read in one transaction, under
 * the author's shared lock (see locks-store.ts): its answer is that list, the timelines beside the author's to push it to.
 * Any other moment: one statement, and no friends.
 */
export async function insertMoment(sql: Sql, m: NewMoment): Promise<string[]> {
  if (m.visibility === "friends") {
    return sql.begin(async (tx) => {
      // sent together (pipelined): the insert runs, and reads the friends, once the lock is held
      const [, [row]] = await Promise.all([
        lockAuthorShared(tx, m.author),
        tx<{ friends: string[] }[]>`
          with ins as (
            insert into moments (id, author, content, visibility, created_at)
            values (${String(m.id)}, ${m.author}, ${m.content}, 'friends', ${m.createdAt}))
          select array(select friend from friendships where principal = ${m.author}) as friends`,
      ]);
      return row!.friends;
    });
  }
  await sql`
    insert into moments (id, author, content, visibility, created_at)
    values (${String(m.id)}, ${m.author}, ${m.content}, ${m.visibility}, ${m.createdAt})`;
  return [];
}

/**
 * Deletes the moment if `author` wrote it and it is not past `horizon` (in the caller's transaction): its visibility,
 * null when there was none to delete (a moment past the horizon is already gone; its row goes with the others past
 * it: runtime/retention/moments-store.ts).
 */
export async function deleteOwnMoment(
  tx: TransactionSql,
  id: bigint,
  author: string,
  horizon: bigint,
): Promise<Visibility | null> {
  const [r] = await tx<{ visibility: Visibility }[]>`
    delete from moments where id = ${String(id)} and id >= ${String(horizon)} and author = ${author} returning visibility`;
  return r?.visibility ?? null;
}
