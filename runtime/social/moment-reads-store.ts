// The statements that read moments: the visibility rule as SQL, one-query hydration of a page, which of a page the
// reader liked, the Postgres feed page and the timeline rebuild queries (and the rows they answer, as the API and the
// record cache show them). Every query that answers moments re-checks visibility, so a stale cache can never show a moment its reader may not see,
// and stops at the moments horizon (`id >= horizon`, a range bound on the primary key and on the author and public
// indexes: runtime/retention/horizons.ts), so a moment past retention is gone at once, before its row is
// (runtime/retention/moments-store.ts). Publishing and deleting them: moments-store.ts.
import type postgres from "postgres";
import type { TransactionSql } from "postgres";
import { avatarPath } from "../../schema/avatar-path.ts";
import type { Sql } from "../db/client.ts";
import { type MomentCounts, type MomentRecord, momentJson } from "../engines/moments.ts";
import type { Moment } from "../../schema/moments.ts";

export interface MomentRow {
  id: bigint;
  author: string;
  display_name: string;
  avatar_key: string | null;
  content: string;
  visibility: Moment["visibility"];
  created_at: Date;
  like_count: number;
  comment_count: number;
  /** Revision of the counts (raised by every change to them). */
  rev: bigint;
}

/** Larger than every moment id: "no cursor". */
export const NO_CURSOR = 2n ** 63n - 1n;

/** The moment as the API shows it to a reader who `liked` it or not. */
export function toMoment(r: MomentRow, liked = false): Moment {
  return {
    id: `moment_${r.id}`,
    content: r.content,
    visibility: r.visibility,
    created_at: r.created_at.toISOString(),
    author: { id: r.author, display_name: r.display_name, avatar_url: avatarPath(r.avatar_key) },
    like_count: r.like_count,
    comment_count: r.comment_count,
    liked_by_me: liked,
  };
}

/** The moment's fixed part as JSON, without its closing brace (see MomentRecord): the same for every reader. */
function momentHead(r: MomentRow): string {
  const { like_count: _l, comment_count: _c, liked_by_me: _m, ...fixed } = toMoment(r);
  return JSON.stringify(fixed).slice(0, -1);
}

/** The moment as JSON, as every reader sees it (the same text a cached record gives): without `liked_by_me`. */
export function momentText(r: MomentRow): string {
  return momentJson(momentHead(r), r.like_count, r.comment_count);
}

/** What the moment record cache keeps of a row. */
export function momentRecord(r: MomentRow): MomentRecord {
  return { id: r.id, head: momentHead(r), likes: r.like_count, comments: r.comment_count, rev: r.rev };
}

/** A moment's counts as a statement returns them (`returning id, like_count, comment_count, rev`). */
export interface CountsRow {
  id: bigint;
  like_count: number;
  comment_count: number;
  rev: bigint;
}

/** Counts a like or comment statement returned, with whose moment it is and its visibility (whom the change concerns). */
export interface CountsChange extends CountsRow {
  author: string;
  visibility: Moment["visibility"];
}

/** The counts statements returned, for the record cache. */
export function momentCounts(rows: CountsRow[]): MomentCounts[] {
  return rows.map((r) => ({ id: r.id, likes: r.like_count, comments: r.comment_count, rev: r.rev }));
}

/**
 * The visibility rule for a moment aliased `m`: the author always; the author's friends when `public` or
 * `friends`; everyone when `public`.
 */
export function visibleTo(sql: Sql, me: string) {
  return visibleToViewer(sql, sql`${me}`);
}

/** The same rule for a viewer given as SQL (a column, for statements that check many viewers at once). */
export function visibleToViewer(sql: Sql, viewer: ReturnType<Sql>) {
  return sql`(m.visibility = 'public' or m.author = ${viewer} or (m.visibility = 'friends' and exists
    (select 1 from friendships f where f.principal = ${viewer} and f.friend = m.author)))
    and not ${blockedEitherWay(sql, viewer, sql`m.author`)}`;
}

/**
 * Whether `a` and `b` (SQL expressions) are cut apart by a block, whichever of them made it (two primary-key probes).
 * A block hides moments both ways (docs/ARCHITECTURE.md, "Blocks and mutes").
 */
export function blockedEitherWay(sql: Sql, a: ReturnType<Sql>, b: ReturnType<Sql>) {
  return sql`(exists (select 1 from blocks bk where bk.blocker = ${a} and bk.blocked = ${b})
    or exists (select 1 from blocks bk where bk.blocker = ${b} and bk.blocked = ${a}))`;
}

/** Whether `me` muted `author` (an SQL expression): the author's moments leave `me`'s feed. */
function mutedBy(sql: Sql, me: string, author: ReturnType<Sql>) {
  return sql`exists (select 1 from mutes mu where mu.principal = ${me} and mu.muted = ${author})`;
}

const ids = (list: bigint[]) => list.map(String);

/**
 * The moments among `list` that `me` may see and that are not past `horizon`, newest first, with author and counts:
 * one query; with `liked`, each row also says whether `me` liked it (one moment read alone: GET /v1/moments/{id}).
 */
export async function hydrate(
  sql: Sql,
  me: string,
  list: bigint[],
  horizon: bigint,
  opts: { liked?: boolean } = {},
): Promise<(MomentRow & { liked?: boolean })[]> {
  if (list.length === 0) return [];
  const liked = opts.liked
    ? sql`, exists (select 1 from moment_likes l where l.principal = ${me} and l.moment = m.id) as liked`
    : sql``;
  return sql<(MomentRow & { liked?: boolean })[]>`
    select m.id, m.author, p.display_name, p.avatar_key, m.content, m.visibility, m.created_at, m.like_count, m.comment_count, m.rev
      ${liked}
    from moments m join principals p on p.id = m.author
    where m.id = any(${ids(list)}::bigint[]) and m.id >= ${String(horizon)} and ${visibleTo(sql, me)}
    order by m.id desc`;
}

/**
 * Which of `list` `me` liked: one query for a whole page (primary-key probes). `liked_by_me` is the reader's own, so no
 * shared cached record holds it (runtime/social/feed.ts adds it to each page).
 */
export async function likedAmong(sql: Sql, me: string, list: bigint[]): Promise<Set<bigint>> {
  if (list.length === 0) return new Set();
  const rows = await sql<{ moment: bigint }[]>`
    select moment from moment_likes where principal = ${me} and moment = any(${ids(list)}::bigint[])`;
  return new Set(rows.map((r) => r.moment));
}

/** The counts Postgres holds now for the moments among `list` that still exist (to set a cache right again). */
export async function countsOf(sql: Sql, list: bigint[]): Promise<CountsRow[]> {
  if (list.length === 0) return [];
  return sql<
    CountsRow[]
  >`select id, like_count, comment_count, rev from moments where id = any(${ids(list)}::bigint[])`;
}

/** Which ids a feed query takes: older than `before`, not past `horizon` (the smallest id still kept; 0n: all are). */
interface IdRange {
  before: bigint;
  horizon: bigint;
}

/** A piece of a statement, built by `sql` as a tagged template. */
type Fragment = postgres.PendingQuery<postgres.Row[]>;

/** Ids of public moments in `r`, newest first (of the authors `shown` lets through, when given). */
function publicIdsSql(sql: Sql, r: IdRange, n: number, shown?: (author: ReturnType<Sql>) => Fragment) {
  return sql`(select id from moments pm where visibility = 'public' and id < ${String(r.before)} and id >= ${String(r.horizon)}
    ${shown ? sql`and ${shown(sql`pm.author`)}` : sql``} order by id desc limit ${n})`;
}

/**
 * Ids of the non-public moments `me` may see (own and friends') in `r`, newest first (of the friends `shown` lets
 * through, when given).
 */
function personalIdsSql(sql: Sql, me: string, r: IdRange, n: number, shown?: (friend: ReturnType<Sql>) => Fragment) {
  const [before, horizon] = [String(r.before), String(r.horizon)];
  return sql`
    (select id from moments where author = ${me} and visibility <> 'public' and id < ${before} and id >= ${horizon}
     order by id desc limit ${n})
    union all
    (select x.id from friendships f cross join lateral (
       select id from moments where author = f.friend and visibility = 'friends' and id < ${before} and id >= ${horizon}
       order by id desc limit ${n}) x
     where f.principal = ${me} ${shown ? sql`and ${shown(sql`f.friend`)}` : sql``})`;
}

/**
 * The newest `n` moments visible to `me` older than `before` and not past `horizon`, straight from Postgres: one
 * query. A `before` at or below the horizon gives none: the feed ends there. `filtered` (a reader with blocks or
 * mutes, either way for blocks): without the moments of authors a block cuts from `me` or that `me` muted, left out
 * before each part's limit so that a page is still full (a friend is never blocked: a block ends the friendship).
 */
export async function feedPage(
  sql: Sql,
  me: string,
  before: bigint,
  n: number,
  horizon: bigint,
  filtered = false,
): Promise<MomentRow[]> {
  const r = { before, horizon };
  const shown = (author: ReturnType<Sql>) =>
    sql`not ${blockedEitherWay(sql, sql`${me}`, author)} and not ${mutedBy(sql, me, author)}`;
  const muted = (friend: ReturnType<Sql>) => sql`not ${mutedBy(sql, me, friend)}`;
  const ids = filtered
    ? sql`${publicIdsSql(sql, r, n, shown)} union all ${personalIdsSql(sql, me, r, n, muted)}`
    : sql`${publicIdsSql(sql, r, n)} union all ${personalIdsSql(sql, me, r, n)}`;
  return sql<MomentRow[]>`
    select m.id, m.author, p.display_name, p.avatar_key, m.content, m.visibility, m.created_at, m.like_count, m.comment_count, m.rev
    from moments m join principals p on p.id = m.author
    where m.id in (select id from (${ids}) u order by id desc limit ${n})
    order by m.id desc`;
}

/** The newest `n` ids of the public timeline not past `horizon`. */
export async function publicTimeline(sql: Sql, n: number, horizon: bigint): Promise<bigint[]> {
  const rows = await sql<{ id: bigint }[]>`
    select id from ${publicIdsSql(sql, { before: NO_CURSOR, horizon }, n)} u order by id desc`;
  return rows.map((r) => r.id);
}

/**
 * The newest `n` ids of a principal's personal timeline (own non-public and friends' `friends` moments) not past
 * `horizon`.
 */
export async function personalTimeline(sql: Sql, me: string, n: number, horizon: bigint): Promise<bigint[]> {
  const rows = await sql<{ id: bigint }[]>`
    select id from (${personalIdsSql(sql, me, { before: NO_CURSOR, horizon }, n)}) u order by id desc limit ${n}`;
  return rows.map((r) => r.id);
}

/** The current friends of a principal. */
export async function friendsOf(sql: Sql | TransactionSql, me: string): Promise<string[]> {
  const rows = await sql<{ friend: string }[]>`select friend from friendships where principal = ${me}`;
  return rows.map((r) => r.friend);
}
