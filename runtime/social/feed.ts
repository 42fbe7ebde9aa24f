// The feed: the caller's personal timeline merged with the public timeline from the feed cache, hydrated
// in one Postgres query; Postgres answers directly on a miss (rebuilding the missing timelines alongside),
// beyond the cached depth, or when hydration finds a cached id no longer visible.
// Warm read: one cache round trip (both timelines in flight together) plus one Postgres query.
import { type FeedCache, PUBLIC_TIMELINE, type TimelineRead } from "../engines/feed.ts";
import type { Logger } from "../log.ts";
import type { Services } from "../services.ts";
import type { Visibility } from "../../schema/moments.ts";
import {
  feedPage,
  hydrate,
  type MomentRow,
  NO_CURSOR,
  personalTimeline,
  publicTimeline,
} from "./moments-sql.ts";

export interface FeedPage {
  rows: MomentRow[];
  hasMore: boolean;
}

/** How feed reads were answered in this process (for metrics and tests). */
export const feedStats = {
  /** From the cache plus one hydrating query. */
  cached: 0,
  /** By Postgres: a timeline was missing (and rebuilt alongside). */
  miss: 0,
  /** By Postgres: the page reached below the cached depth. */
  deep: 0,
  /** By Postgres: a cached id no longer hydrated (deleted, or no longer visible). */
  stale: 0,
};

/** The page of `limit` moments visible to `me` strictly older than `before`, newest first. */
export async function readFeed(svc: Services, log: Logger, me: string, before: bigint | null, limit: number): Promise<FeedPage> {
  const cache = svc.engines.feed;
  const want = limit + 1; // one more than the page tells whether older moments exist
  const [mine, pub] = (await cache.read([me, PUBLIC_TIMELINE], before, want)) as [TimelineRead, TimelineRead];
  if (mine.hit && pub.hit) {
    // Both timelines are complete for ids >= floor; below it, only Postgres knows.
    const floor = mine.floor > pub.floor ? mine.floor : pub.floor;
    const ids = mergeNewest(mine.ids, pub.ids, want, floor);
    if (ids.length === want || floor === 0n) {
      const rows = await hydrate(svc.sql, me, ids);
      if (rows.length === ids.length) {
        feedStats.cached++;
        return toPage(rows, limit);
      }
      feedStats.stale++;
      await dropStale(cache, log, me, { mine: mine.ids, pub: pub.ids }, ids, rows);
    } else {
      feedStats.deep++;
    }
    return toPage(await feedPage(svc.sql, me, before ?? NO_CURSOR, want), limit);
  }
  feedStats.miss++;
  const [rows] = await Promise.all([
    feedPage(svc.sql, me, before ?? NO_CURSOR, want),
    mine.hit ? undefined : rebuild(svc, log, me, mine.lease),
    pub.hit ? undefined : rebuild(svc, log, PUBLIC_TIMELINE, pub.lease),
  ]);
  return toPage(rows, limit);
}

function toPage(rows: MomentRow[], limit: number): FeedPage {
  return rows.length > limit ? { rows: rows.slice(0, limit), hasMore: true } : { rows, hasMore: false };
}

/** The newest `count` distinct ids of two newest-first lists, none below `floor`. */
export function mergeNewest(a: bigint[], b: bigint[], count: number, floor: bigint): bigint[] {
  const out: bigint[] = [];
  let i = 0;
  let j = 0;
  while (out.length < count) {
    const x = a[i];
    const y = b[j];
    let next: bigint;
    if (x === undefined && y === undefined) break;
    if (y === undefined || (x !== undefined && x > y)) {
      next = x!;
      i++;
    } else if (x === undefined || y > x) {
      next = y;
      j++;
    } else {
      next = x;
      i++;
      j++;
    }
    if (next < floor) break;
    out.push(next);
  }
  return out;
}

/** Rebuild one timeline from Postgres and install it with the lease the miss handed out. */
async function rebuild(svc: Services, log: Logger, timeline: string, lease: string): Promise<void> {
  const depth = svc.engines.feed.depth;
  try {
    const ids =
      timeline === PUBLIC_TIMELINE
        ? await publicTimeline(svc.sql, depth)
        : await personalTimeline(svc.sql, timeline, depth);
    await svc.engines.feed.fill(timeline, lease, ids, ids.length < depth);
  } catch (err) {
    // The page itself came from Postgres; the next read retries the rebuild.
    log.warn({ err, timeline }, "feed timeline rebuild failed");
  }
}

/**
 * Cached ids that no longer hydrate. In the public timeline that can only be a deleted moment: remove it.
 * In the caller's timeline it may be an ex-friend's moment that becomes visible again: drop the whole
 * timeline instead (the next read rebuilds it from Postgres), which is always safe.
 */
async function dropStale(
  cache: FeedCache,
  log: Logger,
  me: string,
  cached: { mine: bigint[]; pub: bigint[] },
  ids: bigint[],
  rows: MomentRow[],
): Promise<void> {
  const seen = new Set(rows.map((r) => r.id));
  const stale = new Set(ids.filter((id) => !seen.has(id)));
  try {
    const pub = cached.pub.filter((id) => stale.has(id));
    await Promise.all([
      pub.length > 0 ? cache.remove([PUBLIC_TIMELINE], pub) : undefined,
      cached.mine.some((id) => stale.has(id)) ? cache.invalidate([me]) : undefined,
    ]);
  } catch (err) {
    log.warn({ err }, "feed: dropping stale ids failed");
  }
}

/** The timelines a new moment belongs to. */
export function timelinesFor(author: string, visibility: Visibility, friends: string[]): string[] {
  if (visibility === "public") return [PUBLIC_TIMELINE];
  if (visibility === "friends") return [author, ...friends];
  return [author];
}

/** Push a committed moment to its timelines. On failure the timelines are dropped so they get rebuilt. */
export async function fanOut(svc: Services, log: Logger, id: bigint, timelines: string[]): Promise<void> {
  try {
    await svc.engines.feed.push(timelines, id);
  } catch (err) {
    log.error({ err, moment: String(id) }, "feed fan-out failed; dropping the timelines");
    await invalidate(svc, log, timelines);
  }
}

/** Remove a deleted moment from its timelines (hydration re-checks anyway; this keeps pages cache-served). */
export async function unFanOut(svc: Services, log: Logger, id: bigint, timelines: string[]): Promise<void> {
  try {
    await svc.engines.feed.remove(timelines, [id]);
  } catch (err) {
    log.warn({ err, moment: String(id) }, "feed: removing a deleted moment failed");
  }
}

/** Drop timelines whose contents changed in Postgres (a friendship made or ended). */
export async function invalidate(svc: Services, log: Logger, timelines: string[]): Promise<void> {
  try {
    await svc.engines.feed.invalidate(timelines);
  } catch (err) {
    log.error({ err, timelines }, "feed invalidation failed");
  }
}
