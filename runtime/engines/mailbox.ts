// Mailboxes: each principal's queue of delivered-but-unacknowledged messages (at-least-once delivery).
// A mailbox is a cache of Postgres: the `deliveries` table is the truth. A mailbox that is missing (never
// built, flushed, expired) answers `null` to fetch until it is seeded again from Postgres.

/** One message to put into one principal's mailbox. */
export interface AppendItem {
  principal: string;
  /** The raw (numeric) message id. */
  id: string;
  /** The message as the recipient sees it, serialized as a JSON object. */
  payload: string;
  /**
   * Hand the new entry straight to a reader whose last entry was at this cursor: when the mailbox is built and
   * complete, stores the message, and holds nothing after `after`, the entry counts as delivered once and its
   * cursor is returned, so that reader need not fetch it.
   */
  after?: string;
  /**
   * Hand the new entry out to the reader that an earlier append handed message `afterHanded` (raw id) to, in a
   * chain: when the mailbox is built and complete, that message's entry is the last one handed out and nothing
   * follows it, the new entry counts as delivered once and its cursor is returned. A reader can thus take the
   * messages of several sends whose appends overlap, each from its own append, where `after` alone would leave all
   * but the first to a fetch (the reader's cursor is not known until the first append answers). Appends are
   * applied in the order they are called; one that runs out of order only loses the hand-out.
   */
  afterHanded?: string;
  /**
   * Only make sure a built mailbox holds the message (finishing the appends of a node that died, see
   * runtime/messaging/reconcile.ts): a mailbox not built is left alone (it is rebuilt from Postgres when needed).
   */
  ensure?: boolean;
}

export interface MailboxEntry {
  /** The raw (numeric) message id. */
  id: string;
  payload: string;
  /** How many times it has been handed out, this time included. */
  deliveryCount: number;
  /** Opaque position of the entry: pass it to fetch to read only what comes after it. */
  cursor: string;
}

export interface SeedEntry {
  id: string;
  payload: string;
  /** Deliveries recorded in Postgres so far. */
  deliveryCount: number;
}

/**
 * Recipients per append call (MailboxEngine.appendPart) on one Redis and in memory: a 999-member group send is eight
 * calls sent together, so the first members' frames go out while Redis appends for the rest, and other clients'
 * commands wait behind one part, not the whole group (bench/RESULTS.md, "a big group's append in parts": their
 * PING p99 during a 999-member fan-out fell 1.4-4.6x). In memory parts cost nothing; they keep the hub's behaviour
 * the same on both engines.
 */
export const APPEND_PART = 128;

/** `items` cut into parts of at most `size` (MailboxEngine.appendPart), in order; the list itself when it fits. */
export function appendParts<T>(items: T[], size: number): T[][] {
  if (items.length <= size) return [items];
  const out: T[][] = [];
  for (let i = 0; i < items.length; i += size) out.push(items.slice(i, i + size));
  return out;
}

export interface MailboxEngine {
  /**
   * The most recipients one append call should carry: a bigger group's send is split into calls of this many, sent
   * together (runtime/messaging/hub.ts). Infinity where the engine splits a call itself (a Redis Cluster: one call
   * per slot already, and parts would only multiply its sharded wake-ups).
   */
  readonly appendPart: number;
  /**
   * The most entries a mailbox holds. Beyond it the mailbox is "partial": newer messages wait in Postgres
   * and are loaded by a later seed once acknowledgements have drained the mailbox below half of it.
   */
  readonly capacity: number;
  /**
   * How long an ack is remembered (a tombstone): a message acknowledged that long ago or less is never stored
   * again, by a seed or an append. A seed or an ensure must read Postgres less than that before it reaches the
   * mailbox (the reader checks its own age).
   */
  readonly ackMemoryMs: number;
  /**
   * Append messages to the mailboxes named (one round trip for all) and wake whoever waits on them; a message
   * already there or acknowledged lately is not stored again. Per item: the entry's cursor when it was handed out
   * (see `AppendItem.after` and `afterHanded`), else null. Items are all `ensure` or none.
   */
  append(items: AppendItem[]): Promise<(string | null)[]>;
  /**
   * Entries after `cursor` (from the oldest unacknowledged one when null), oldest first, at most `limit`,
   * each counted as one more delivery. `null` when the mailbox must first be seeded from Postgres.
   */
  fetch(principal: string, limit: number, cursor: string | null): Promise<MailboxEntry[] | null>;
  /**
   * Build a missing mailbox from Postgres rows (oldest first), merged with anything appended meanwhile.
   * `complete` is false when Postgres holds more unacknowledged messages than were passed.
   * Does nothing when the mailbox was seeded in the meantime. Messages acknowledged lately are left out.
   * A mailbox never built or lost (no seed state) counts a row it does not hold as delivered at least once: it may
   * have been handed out from the lost mailbox with a count that had not reached Postgres, and a redelivery flagged
   * as possible (count 2) is harmless where one passed off as a first delivery is not. A partial mailbox being
   * refilled, or what was appended while not built, keeps its count.
   */
  seed(principal: string, entries: SeedEntry[], complete: boolean): Promise<void>;
  /**
   * Remove an entry for good and remember the ack for `ackMemoryMs` (also when the entry was not there: the
   * mailbox may be under rebuild). False when it was not there.
   */
  ack(principal: string, id: string): Promise<boolean>;
  /**
   * What a cumulative ack of message `id` takes along: the raw ids of the entries of the same thread (read from
   * the payload's `thread_id`) that come before it in the mailbox and have been handed out at least once, oldest
   * first. Empty when `id` is not in the mailbox (not built, or acknowledged). A message appended late and not yet
   * handed out is not among them: a cumulative ack never takes a message its reader has not seen.
   */
  handedBefore(principal: string, id: string): Promise<string[]>;
  /** Forget a principal's whole mailbox and wake its waiters: their next fetch re-seeds it from Postgres. */
  clear(principal: string): Promise<void>;
  /**
   * Call `handler(principal, id)` whenever a message (raw id) is appended to a mailbox, on any node, and
   * `handler(principal, null)` when a mailbox was cleared.
   */
  onWake(handler: (principal: string, id: string | null) => void): Promise<() => Promise<void>>;
}
