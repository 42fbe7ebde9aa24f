// The feed fan-out cache: capped, newest-first sets of moment ids, one per principal ("personal
// timeline": the principal's own non-public moments and friends' `friends` moments) plus one public
// timeline (everyone's public moments). A feed is the union of the caller's timeline and the public one.
//
// Postgres stays the truth. A timeline is either filled (complete for every id >= its floor) or missing;
// a reader that misses gets a lease, rebuilds the timeline from Postgres and fills it with that lease.
// `invalidate` revokes outstanding leases, so a rebuild that read Postgres before a friendship change can
// never install a stale timeline. Pushes land only on timelines that exist (filled or being rebuilt):
// anyone else rebuilds from Postgres later, which already holds the moment.
//
// `readPage` serves a whole feed page: the timelines merged, with what the moment record cache
// (moments.ts) holds for each id, in one round trip.
import type { CachedMoment } from "./moments.ts";

/** The name of the public timeline (principal ids never take this shape). */
export const PUBLIC_TIMELINE = "public";

/** Default number of ids a timeline keeps. */
export const DEFAULT_FEED_DEPTH = 500;

export type TimelineRead =
  /** Filled: up to `count` ids strictly older than `before`, newest first; complete for ids >= floor (0n: complete). */
  | { hit: true; floor: bigint; ids: bigint[] }
  /** Not cached: rebuild from Postgres and `fill` with this lease. */
  | { hit: false; lease: string };

export type PageRead =
  /** A timeline is not cached: `leases[i]` is the lease to rebuild timeline i with (null: it is cached). */
  | { state: "miss"; leases: (string | null)[] }
  /** Fewer ids than wanted above the timelines' newest floor: only Postgres can tell the page. */
  | { state: "deep" }
  /** Every merged id (`count` of them, at most the count asked) has a cached record: the first `show` as JSON joined with ','. */
  | { state: "shown"; count: number; json: string }
  /** The merged newest ids (up to the count asked), with their records in order, some not cached or deleted. */
  | { state: "hit"; ids: bigint[]; moments: CachedMoment[] };

export interface FeedCache {
  /** How many ids a timeline keeps. */
  readonly depth: number;
  /** Read several timelines in one round trip, in the order given. */
  read(timelines: string[], before: bigint | null, count: number): Promise<TimelineRead[]>;
  /**
   * Read timelines together: when all are filled, their newest `count` distinct ids older than `before`
   * (none below the newest floor), with their moment records; else a lease for each one not filled.
   */
  readPage(timelines: string[], before: bigint | null, count: number, show: number): Promise<PageRead>;
  /** Add a moment to each named timeline that exists (filled or being rebuilt), trimming to depth. */
  push(timelines: string[], momentId: bigint): Promise<void>;
  /** Remove moments from the named timelines. */
  remove(timelines: string[], momentIds: bigint[]): Promise<void>;
  /**
   * Install a rebuilt timeline: `ids` are its newest ids from Postgres (at most depth), `complete` when
   * Postgres had no more. Merged with pushes made since the lease was handed out. False (and nothing
   * written) when the lease was revoked.
   */
  fill(timeline: string, lease: string, ids: bigint[], complete: boolean): Promise<boolean>;
  /** Drop timelines and revoke their leases: the next read rebuilds them from Postgres. */
  invalidate(timelines: string[]): Promise<void>;
}

/** The newest `count` distinct ids of newest-first lists, none below `floor`. */
function mergeNewest(lists: bigint[][], count: number, floor: bigint): bigint[] {
  const out: bigint[] = [];
  const at = lists.map(() => 0);
  while (out.length < count) {
    let best: bigint | undefined;
    lists.forEach((l, i) => {
      const v = l[at[i]!];
      if (v !== undefined && (best === undefined || v > best)) best = v;
    });
    if (best === undefined || best < floor) break;
    lists.forEach((l, i) => {
      if (l[at[i]!] === best) at[i]!++;
    });
    out.push(best);
  }
  return out;
}

/**
 * A page from timelines read one by one (TimelineRead each): a miss, "deep", or the merged newest ids with what
 * `records` has for them. How a page is read where one call cannot do it all (the memory engine, a Redis Cluster).
 */
export async function pageFromReads(
  reads: TimelineRead[],
  count: number,
  show: number,
  records: (ids: bigint[]) => Promise<CachedMoment[]>,
): Promise<PageRead> {
  if (reads.some((r) => !r.hit)) return { state: "miss", leases: reads.map((r) => (r.hit ? null : r.lease)) };
  const hits = reads as Extract<TimelineRead, { hit: true }>[];
  const floor = hits.reduce((f, r) => (r.floor > f ? r.floor : f), 0n);
  const ids = mergeNewest(
    hits.map((r) => r.ids),
    count,
    floor,
  );
  if (ids.length < count && floor !== 0n) return { state: "deep" };
  return pageOf(ids, ids.length === 0 ? [] : await records(ids), show);
}

/** A page of merged ids and their records: "shown" when every record is cached. */
function pageOf(ids: bigint[], moments: CachedMoment[], show: number): PageRead {
  return moments.every((m) => typeof m === "string")
    ? { state: "shown", count: ids.length, json: moments.slice(0, show).join(",") }
    : { state: "hit", ids, moments };
}
