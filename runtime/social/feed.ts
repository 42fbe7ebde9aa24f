// The feed: the caller's personal timeline merged with the public timeline, each moment shown from the
// moment record cache, all in one round trip to the feed cache (FeedCache.readPage). Postgres answers
// directly on a timeline miss (rebuilding the missing timelines alongside), beyond the cached depth, or
// when a cached id turns out deleted; it hydrates (and caches) records the cache lacks, re-checking their
// visibility. Which ids a reader may see comes from the timelines (see handlers/friends.ts for how an
// unfriending drops them before and after it commits). Whether the reader liked each moment (`liked_by_me`) is the
// reader's own, so no shared record holds it: every page gets it in one statement of its own (markLiked).
//
// Every page stops at the moments horizon (runtime/retention/horizons.ts): the Postgres queries bound their ids by it,
// and a cached page is cut where its ids pass it (the timelines may still hold expired ids until pushes trim them).
import type { CachedMoment } from "../engines/moments.ts";
import { type FeedCache, PUBLIC_TIMELINE } from "../engines/feed.ts";
import type { Logger } from "../log.ts";
import type { Services } from "../services.ts";
import { cutFrom, isClear, type Relations } from "./blocks.ts";
import type { Visibility } from "../../schema/moments.ts";
import {
  feedPage,
  hydrate,
  type CountsChange,
  type CountsRow,
  likedAmong,
  momentCounts,
  momentRecord,
  type MomentRow,
  momentText,
  NO_CURSOR,
  personalTimeline,
  publicTimeline,
} from "./moment-reads-store.ts";

export interface FeedPage {
  /** The page's moments as JSON, newest first, joined with ','. */
  moments: string;
  hasMore: boolean;
}

/** How feed reads were answered in this process (for metrics and tests). */
export const feedStats = {
  /** From the caches (records the record cache lacked hydrated by Postgres). */
  cached: 0,
  /** By Postgres: a timeline was missing (and rebuilt alongside). */
  miss: 0,
  /** By Postgres: the page reached below the cached depth. */
  deep: 0,
  /** By Postgres: a cached id turned out deleted or no longer visible. */
  stale: 0,
};

/**
 * The page of `limit` moments visible to `me` strictly older than `before` and not past the moments horizon, newest
 * first, each with `liked_by_me`. A cursor at or before the horizon gets an empty last page: the feed ends there.
 */
export async function readFeed(
  svc: Services,
  log: Logger,
  me: string,
  before: bigint | null,
  limit: number,
): Promise<FeedPage> {
  const page = await readShared(svc, log, me, before, limit);
  return { moments: await markLiked(svc, me, page.moments), hasMore: page.hasMore };
}

/**
 * Each record of a page (records joined with ',', each ending in its closing brace: momentJson) with the reader's
 * `liked_by_me` added last, read in one statement for the page: the records are shared by every reader, this is not.
 */
async function markLiked(svc: Services, me: string, json: string): Promise<string> {
  const starts = [...json.matchAll(RECORD_START)];
  if (starts.length === 0) return json;
  const liked = await likedAmong(
    svc.sql,
    me,
    starts.map((m) => BigInt(m[1]!)),
  );
  return starts
    .map((m, i) => {
      const end = i + 1 < starts.length ? starts[i + 1]!.index - 1 : json.length;
      const record = json.slice(m.index, end);
      return `${record.slice(0, -1)},"liked_by_me":${liked.has(BigInt(m[1]!))}}`;
    })
    .join(",");
}

/** The page as every reader sees it (the records of the caches or of Postgres, without `liked_by_me`). */
async function readShared(
  svc: Services,
  log: Logger,
  me: string,
  before: bigint | null,
  limit: number,
): Promise<FeedPage> {
  const horizon = svc.horizons.moments();
  if (before !== null && before <= horizon) return { moments: "", hasMore: false };
  const cache = svc.engines.feed;
  const want = limit + 1; // one more than the page tells whether older moments exist
  const timelines = [me, PUBLIC_TIMELINE];
  // a reader with blocks (either way) or mutes: the cached page stands when it shows none of theirs, else Postgres
  // answers, leaving them out (the timelines are shared and made before any block: they are filtered on read)
  const rel = await svc.relations.of(me);
  if (!isClear(rel)) return readFiltered(svc, log, me, rel, before, limit, horizon);
  // Under retention every record read comes back as JSON, so the page can be cut at the horizon and still tell has_more.
  const page = await cache.readPage(timelines, before, want, horizon === 0n ? limit : want);
  if (page.state === "shown") {
    feedStats.cached++;
    return horizon === 0n
      ? { moments: page.json, hasMore: page.count > limit }
      : cutAtHorizon(page.json, horizon, limit);
  }
  if (page.state === "hit") {
    const kept = keptBefore(page.ids, horizon);
    const ids = page.ids.slice(0, kept);
    const shown = await showCached(svc, log, me, ids, page.moments.slice(0, kept), limit, horizon);
    if (typeof shown === "string") {
      feedStats.cached++;
      return { moments: shown, hasMore: ids.length > limit };
    }
    feedStats.stale++;
    await dropStale(cache, log, me, shown.stale);
  } else if (page.state === "deep") {
    feedStats.deep++;
  } else {
    feedStats.miss++;
    const [rows] = await Promise.all([
      feedPage(svc.sql, me, before ?? NO_CURSOR, want, horizon),
      ...page.leases.map((lease, i) => (lease === null ? undefined : rebuild(svc, log, timelines[i]!, lease, horizon))),
    ]);
    return fromPostgres(svc, log, rows, limit);
  }
  return fromPostgres(svc, log, await feedPage(svc.sql, me, before ?? NO_CURSOR, want, horizon), limit);
}

/** The authors of a cached page's records, in order (each record's first author object: RECORD_START's note). */
const RECORD_AUTHOR =
  /\{"id":"moment_\d+","content":"(?:[^"\\]|\\.)*","visibility":"[a-z]+","created_at":"[^"]*","author":\{"id":"([^"]+)"/g;

/** Whether a moment by `author` is hidden from the reader whose relations are `rel`. */
const hides = (rel: Relations, author: string) => cutFrom(rel, author) || rel.muted.has(author);

/**
 * The feed of a reader with blocks or mutes: the cached page when it is whole and shows none of those authors, else
 * Postgres's page without them (rebuilding missing timelines alongside, as an unfiltered miss does).
 */
async function readFiltered(
  svc: Services,
  log: Logger,
  me: string,
  rel: Relations,
  before: bigint | null,
  limit: number,
  horizon: bigint,
): Promise<FeedPage> {
  const want = limit + 1;
  const timelines = [me, PUBLIC_TIMELINE];
  const page = await svc.engines.feed.readPage(timelines, before, want, want);
  if (page.state === "shown") {
    const authors = [...page.json.matchAll(RECORD_AUTHOR)].map((m) => m[1]!);
    if (authors.length === page.count && !authors.some((a) => hides(rel, a))) {
      feedStats.cached++;
      return cutAtHorizon(page.json, horizon, limit);
    }
  }
  const rows = await Promise.all([
    feedPage(svc.sql, me, before ?? NO_CURSOR, want, horizon, true),
    ...(page.state === "miss"
      ? page.leases.map((lease, i) => (lease === null ? undefined : rebuild(svc, log, timelines[i]!, lease, horizon)))
      : []),
  ]);
  feedStats.miss++;
  return fromPostgres(svc, log, rows[0], limit);
}

/** How many of newest-first `ids` are not past `horizon` (they lead the list). */
function keptBefore(ids: bigint[], horizon: bigint): number {
  const at = ids.findIndex((id) => id < horizon);
  return at === -1 ? ids.length : at;
}

/**
 * Where each record of a cached page starts, with its id. Records are joined with ',' and each opens with its id
 * (`{"id":"moment_<n>"`, runtime/engines/moments.ts); inside a JSON string a quote is always escaped, so that text
 * can stand nowhere else (an author object's id never starts `moment_`).
 */
const RECORD_START = /\{"id":"moment_(\d+)"/g;

/** A page the cache showed whole (`want` records at most, newest first), cut at the horizon and to `limit`. */
function cutAtHorizon(json: string, horizon: bigint, limit: number): FeedPage {
  const starts = [...json.matchAll(RECORD_START)];
  const kept = keptBefore(
    starts.map((m) => BigInt(m[1]!)),
    horizon,
  );
  const show = Math.min(kept, limit);
  // drop the records after the first `show`, with the ',' before them
  const moments = show < starts.length ? json.slice(0, Math.max(0, starts[show]!.index - 1)) : json;
  return { moments, hasMore: kept > limit };
}

/**
 * The first `show` of cached timeline ids as JSON joined with ','; records the cache lacks come from
 * Postgres (visibility re-checked) and are cached. The ids that are deleted or no longer visible, if any.
 */
async function showCached(
  svc: Services,
  log: Logger,
  me: string,
  ids: bigint[],
  moments: CachedMoment[],
  show: number,
  horizon: bigint,
): Promise<string | { stale: bigint[] }> {
  const gone = ids.filter((_, i) => moments[i] === null);
  if (gone.length > 0) return { stale: gone };
  const missing = ids.filter((_, i) => moments[i] === undefined);
  const rows = await hydrate(svc.sql, me, missing, horizon);
  if (rows.length !== missing.length) {
    const seen = new Set(rows.map((r) => r.id));
    return { stale: missing.filter((id) => !seen.has(id)) };
  }
  await remember(svc, log, rows);
  const text = new Map(rows.map((r) => [r.id, momentText(r)]));
  return ids
    .slice(0, show)
    .map((id, i) => moments[i] ?? text.get(id)!)
    .join(",");
}

/** A page Postgres answered; its moments are cached for the reads after. */
async function fromPostgres(svc: Services, log: Logger, rows: MomentRow[], limit: number): Promise<FeedPage> {
  await remember(svc, log, rows);
  return { moments: rows.slice(0, limit).map(momentText).join(","), hasMore: rows.length > limit };
}

/** Cache moment records read from Postgres (a failure only costs later reads a trip to Postgres). */
async function remember(svc: Services, log: Logger, rows: MomentRow[]): Promise<void> {
  if (rows.length === 0) return;
  try {
    await svc.engines.moments.store(rows.map(momentRecord));
  } catch (err) {
    log.warn({ err }, "feed: caching moment records failed");
  }
}

/**
 * Rebuild one timeline from Postgres and install it with the lease the miss handed out. Expired moments are left out
 * (the horizon only moves forward, so a timeline complete down to it is complete for every read after).
 */
async function rebuild(svc: Services, log: Logger, timeline: string, lease: string, horizon: bigint): Promise<void> {
  const depth = svc.engines.feed.depth;
  try {
    const ids =
      timeline === PUBLIC_TIMELINE
        ? await publicTimeline(svc.sql, depth, horizon)
        : await personalTimeline(svc.sql, timeline, depth, horizon);
    await svc.engines.feed.fill(timeline, lease, ids, ids.length < depth);
  } catch (err) {
    // The page itself came from Postgres; the next read retries the rebuild.
    log.warn({ err, timeline }, "feed timeline rebuild failed");
  }
}

/**
 * Cached ids that turned out stale (a moment deleted, or no longer visible to `me`): removed from the
 * public timeline, and the caller's timeline dropped (the next read rebuilds it from Postgres).
 */
async function dropStale(cache: FeedCache, log: Logger, me: string, stale: bigint[]): Promise<void> {
  try {
    await Promise.all([cache.remove([PUBLIC_TIMELINE], stale), cache.invalidate([me])]);
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

/**
 * Hand counts a statement just committed to the moment record cache (rows whose `id` is null changed
 * nothing). On failure the moments are repaired once Redis answers (runtime/social/cache-repair.ts). Rows that say whose
 * moment it is (a like, an unlike, a comment: by `by`) are announced too, behind: the connections that may see the
 * moment get its new counts (runtime/ws/moment-relay.ts).
 */
export async function recordCounts(
  svc: Services,
  log: Logger,
  rows: (Omit<CountsRow, "id"> & { id: bigint | null } & Partial<Pick<CountsChange, "author" | "visibility">>)[],
  by?: string,
): Promise<void> {
  const changed = rows.filter((r): r is CountsRow & Partial<CountsChange> => r.id !== null);
  if (changed.length === 0) return;
  try {
    await svc.engines.moments.counts(momentCounts(changed));
  } catch (err) {
    log.error({ err }, "moment counts committed, but caching them failed; repaired when Redis answers");
    svc.cacheRepair.counts(changed.map((r) => r.id));
  }
  for (const { id, author, visibility, like_count, comment_count, rev } of changed) {
    if (!author || !visibility) continue;
    const counts = { likes: like_count, comments: comment_count, rev: Number(rev) };
    void svc.announce
      .momentCounts({ id: String(id), author, visibility, ...counts, ...(by ? { by } : {}) })
      .catch((err: unknown) => log.warn({ err }, "moment counts not announced"));
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
    log.error({ err, timelines }, "feed invalidation failed; repaired when Redis answers");
    svc.cacheRepair.invalidate(timelines);
  }
}
