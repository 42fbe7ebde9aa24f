// What the messaging core (the hub, the streams, the WebSocket sessions) reads and writes of the durable state, as two
// interfaces: a member's place in its streams (reads past cursors, hand-out marks, joining and leaving, acks) and the
// commits of sends. Postgres implements them over the stores' statements (runtime/messaging/core-stores-postgres.ts);
// an in-memory twin implements them for the unit tier (test/twins/), and one contract suite runs against both
// (test/stream-store.contract.ts).
import type { AckItem, AckOutcome } from "./acks-store.ts";
import type { DirectMessage, NewMessage } from "./messages-store.ts";
import type { Backlog, Published, Read } from "./stream-store.ts";
import type { StreamId } from "./stream-id.ts";

/** A socket starts (`seq` null) or stops (the last number published to it) taking a stream live. */
export interface Mark {
  member: string;
  stream: StreamId;
  seq: number | null;
}

/**
 * A member's place in its streams: an inbox (a principal's direct messages, numbered per recipient) and each group
 * (numbered per group). A member's state in one is a cursor (everything up to `acked` is acknowledged), the acks above
 * it out of order, and what it was handed before (so a redelivery counts 2, 3, ...).
 */
export interface StreamStore {
  /** The streams of each of `members`: their inbox first, then their groups. */
  streamsOf(members: string[]): Promise<Map<string, StreamId[]>>;
  /**
   * Hand out, for each read, what its member has not acknowledged past the cursor (or past `after`), oldest first per
   * stream, at most `limit` per stream, none below `horizon` (past retention), each with its delivery count; record
   * the hand-out (the next read of the same message counts one more); hand each cursor's `expired` count to one read.
   */
  backlog(reads: Read[], horizon: bigint): Promise<Backlog[]>;
  /** A stream's messages numbered above `after`, in order, at most `limit`, none below `horizon`. */
  after(stream: StreamId, after: number, limit: number, horizon: bigint): Promise<Published[]>;
  /**
   * The newest number of each of these streams (one statement for all): absent for a stream with none yet (an inbox
   * never written to, a group gone). What the position check compares with what this node published.
   */
  heads(streams: StreamId[]): Promise<Map<StreamId, number>>;
  /**
   * Sockets start or stop taking streams live. Started: every message of the stream counts as possibly delivered
   * until it stops (an inbox never written to gets its cursor). Stopped: what was published to it up to `seq` does.
   */
  mark(marks: Mark[]): Promise<void>;
  /**
   * Members join a group (its membership and their cursors together): a new member's cursor starts at the group's
   * newest message, so it receives, and may acknowledge, only what follows. Already members keep theirs. Returns the
   * cursors made. The rows only: who may be added, the size bound and an owner's hand-over are the group use cases'
   * (messaging/group-admin.ts, which write these rows inside their own transaction); the unit tier makes members here.
   */
  join(group: bigint, members: string[]): Promise<{ member: string; acked: number }[]>;
  /** A member leaves a group: its membership, cursor, acks and counts go (the rows only, as for join). False when it was not a member. */
  leave(group: bigint, member: string): Promise<boolean>;
  /**
   * Acknowledge for good, each item moving its member's cursor in the message's stream (the message alone, or
   * `through` it with every earlier one; a run of acks above the cursor is taken in as the cursor reaches it). Per
   * item: the outcome, false when the message was never the member's to acknowledge.
   */
  ack(items: AckItem[]): Promise<AckOutcome[]>;
}

/** The commits of sends: each message stored and numbered in its stream in one step, a batch at a time. */
export interface SendStore {
  /** Direct messages, each numbered in its recipient's inbox. Per item: its number, null (no such recipient), or an IdClash. */
  storeDirect(items: DirectMessage[]): Promise<(number | null | Error)[]>;
  /**
   * Group messages, each numbered in its group, the sender's own cursor taking it. Per item: its number, null (the
   * sender is not a member), or an IdClash.
   */
  storeGroup(items: NewMessage[]): Promise<(number | null | Error)[]>;
  /** Of these message ids, the ones committed, with their numbers (a send whose commit's outcome was not heard). */
  committed(ids: bigint[]): Promise<Map<string, number>>;
  /** The direct thread of `me` and `to`, made (as `newId`) on first use; null when `to` does not take messages from `me`. */
  directThread(me: string, to: string, newId: bigint): Promise<bigint | null>;
}

/** The stores the messaging core is built on. */
export interface CoreStores {
  streams: StreamStore;
  sends: SendStore;
}
