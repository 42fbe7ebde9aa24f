// Moments past retention leave Postgres in bounded batches (the maintenance job calls expireMoments:
// runtime/retention/maintainer.ts). Readers stopped seeing them the moment they passed the horizon
// (runtime/social/moment-reads-store.ts), so when their rows go changes nothing anyone sees.
//
// Their likes and comments go with them by the foreign keys' ON DELETE CASCADE (schema/migrations/0002_social.sql),
// each found through an index that leads with the moment (moment_likes' primary key, moment_comments_moment_id_idx).
// No other row counts them: like_count and comment_count live on the moment itself, and no per-principal count of
// moments, likes or comments exists. The feed timelines may keep an expired id until pushes trim them to their depth,
// and a cached record until its TTL; the reads' horizon bound hides both.
import type { Sql } from "../db/client.ts";

/**
 * Deletes at most `limit` moments with ids below `before` (the moments horizon, or any id bound under it), oldest
 * first, with their likes and comments: how many moments it removed (fewer than `limit`: none older remain).
 */
export async function expireMoments(sql: Sql, before: bigint, limit: number): Promise<number> {
  if (limit <= 0 || before <= 0n) return 0;
  // The primary key gives the oldest ids below the bound in order: a range scan that stops after `limit`.
  const [r] = await sql<{ n: number }[]>`
    with gone as (
      delete from moments where id in (
        select id from moments where id < ${String(before)} order by id limit ${limit})
      returning 1)
    select count(*)::int as n from gone`;
  return r!.n;
}
