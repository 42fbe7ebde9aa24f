// The moment record cache: what a feed page shows of each moment, so a warm feed read needs no Postgres.
//
// A record holds a moment's fixed part (id, content, visibility, creation time, author) as a JSON object
// head, and its counts with the revision Postgres gave them (`moments.rev`, raised by every statement that
// changes a count). Counts are a last-writer-by-revision register: a write carrying an older revision than
// the one held is ignored, so a slow fill can never put back counts older than a like already applied.
//
// Deletion leaves a tombstone that no later fill removes; it is written before the delete commits, so a
// fill that read Postgres before the delete cannot bring the moment back. A reader treats a tombstone as
// "stale": it answers from Postgres, which knows the moment is gone.
//
// Which moments a reader may see is not recorded here: the timelines (feed.ts) hold only moments visible
// to their owner, and the public timeline only public ones.

/** A moment's fixed part, its counts and their revision, as Postgres gave them. */
export interface MomentRecord {
  id: bigint;
  /** The moment as the API shows it, as JSON, without its counts: `{"id":...,"author":{...}` (no closing brace). */
  head: string;
  likes: number;
  comments: number;
  rev: bigint;
}

export interface MomentCounts {
  id: bigint;
  likes: number;
  comments: number;
  rev: bigint;
}

/** One looked-up moment: its JSON (head and counts); null: deleted; undefined: not cached. */
export type CachedMoment = string | null | undefined;

export interface MomentCache {
  /** The cached moments, in the order asked: one round trip. */
  get(ids: bigint[]): Promise<CachedMoment[]>;
  /** Cache moments read from Postgres (counts only where newer than those held). */
  store(records: MomentRecord[]): Promise<void>;
  /** Apply counts committed in Postgres (only where newer than those held). */
  counts(updates: MomentCounts[]): Promise<void>;
  /** Tombstone moments about to be deleted. */
  forget(ids: bigint[]): Promise<void>;
}

/** The JSON a record shows: its head closed with its counts (the field order of the API's Moment). */
export function momentJson(head: string, likes: number | string, comments: number | string): string {
  return `${head},"like_count":${likes},"comment_count":${comments}}`;
}
