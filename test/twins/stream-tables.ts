// The in-memory twin's tables: what Postgres holds for the messaging core (principals, direct threads, groups and
// their members, every stream's numbered messages, and each member's cursor in each of its streams), the ack rule
// every path shares (flock_stream_ack, migration 0024), what retention does to the cursors it passes
// (runtime/retention/partitions-store.ts expireCursors), and a switch that makes every call fail as an outage does.
// The twin's stores (stream-store.ts, send-store.ts beside this file) read and write these; the contract suite
// (test/stream-store.contract.ts) holds them to what Postgres does.
import type { MessageRow, StoredAttachment } from "../../runtime/messaging/payload.ts";
import { toMessageAt } from "../../runtime/messaging/payload.ts";
import type { Published } from "../../runtime/messaging/stream-store.ts";
import { groupStream, inboxStream, INBOX_THREAD, type StreamId, threadOf } from "../../runtime/messaging/stream-id.ts";
import type { Quote } from "../../schema/messages.ts";

/** delivered while one of the member's sockets takes the stream live (Postgres's LIVE, the largest bigint). */
export const LIVE = Number.POSITIVE_INFINITY;

export interface PrincipalRow {
  id: string;
  kind: "agent" | "human";
  name: string;
  avatar: string | null;
  /** A person's choice (principals.accepts_messages_from); an agent takes messages from anyone. */
  acceptsFrom: "anyone" | "friends";
}

/** A stored message: its row as a read shows it (the sender's name and picture joined at read time), and its number. */
export interface StoredMessage {
  row: Omit<MessageRow, "sender_name" | "sender_avatar">;
  stream: StreamId;
  seq: number;
  idempotencyKey: string | undefined;
}

/** A member's place in one stream (stream_cursors, with its stream_acks and handout_counts). */
export interface Cursor {
  acked: number;
  joined: number;
  delivered: number;
  expired: number;
  /** Acknowledged above `acked`, out of order. */
  above: Set<number>;
  /** How often a number was handed out, past its second hand-out. */
  counts: Map<number, number>;
}

/** A stream's sequence and its messages, `messages[seq - 1]` numbered `seq`. */
interface Sequence {
  last: number;
  messages: StoredMessage[];
}

export class StreamTables {
  readonly principals = new Map<string, PrincipalRow>();
  /** "<principal> <friend>" for each friendship row. */
  readonly friendships = new Set<string>();
  /** Every thread (direct and group) by id; a direct one's pair key. */
  readonly threads = new Map<bigint, { kind: "direct" | "group"; pair?: string }>();
  readonly pairs = new Map<string, bigint>();
  /** Each group's members, in the order they joined. */
  readonly groups = new Map<bigint, Set<string>>();
  /** Inboxes (made by their first message) and groups (made with the group). */
  private readonly sequences = new Map<StreamId, Sequence>();
  readonly messages = new Map<string, StoredMessage>();
  private readonly cursorsOf = new Map<string, Map<StreamId, Cursor>>();
  private failure: (() => Error) | undefined;

  /** From now on every call fails as Postgres out of reach does (`code`), until `up()`. */
  down(code = "ECONNREFUSED"): void {
    this.failure = () => Object.assign(new Error(`connect ${code} (the twin is down)`), { code });
  }

  up(): void {
    this.failure = undefined;
  }

  /** Throws while down: every store method calls it first. */
  check(): void {
    if (this.failure) throw this.failure();
  }

  // --- what a test sets up (as registering, befriending and creating a group do)

  principal(id: string, opts: Partial<Omit<PrincipalRow, "id">> = {}): void {
    this.principals.set(id, {
      id,
      kind: opts.kind ?? (id.startsWith("P") ? "human" : "agent"),
      name: opts.name ?? `name ${id}`,
      avatar: opts.avatar ?? null,
      acceptsFrom: opts.acceptsFrom ?? "friends",
    });
  }

  befriend(a: string, b: string): void {
    this.friendships.add(`${a} ${b}`);
    this.friendships.add(`${b} ${a}`);
  }

  /** A new group with its members (the creator first), each with a cursor at its start. */
  group(id: bigint, members: string[]): void {
    this.threads.set(id, { kind: "group" });
    this.groups.set(id, new Set());
    this.sequences.set(groupStream(id), { last: 0, messages: [] });
    this.join(id, members);
  }

  // --- the rules the stores share

  /** Members join a group: new members' cursors start at its newest message (stream-store.ts joinGroup). */
  join(group: bigint, members: string[]): { member: string; acked: number }[] {
    const those = this.groups.get(group);
    if (those === undefined) throw new Error(`no group ${group}`);
    const stream = groupStream(group);
    const last = this.last(stream);
    const made: { member: string; acked: number }[] = [];
    for (const m of members) {
      if (!this.principals.has(m)) throw new Error(`no principal ${m} (a foreign key)`);
      those.add(m);
      if (this.cursor(m, stream) !== undefined) continue;
      this.setCursor(m, stream, last);
      made.push({ member: m, acked: last });
    }
    return made;
  }

  cursor(member: string, stream: StreamId): Cursor | undefined {
    return this.cursorsOf.get(member)?.get(stream);
  }

  /** A member's cursors, by thread id (its inbox's 0 first, then its groups'), as a read past them goes. */
  cursors(member: string): [StreamId, Cursor][] {
    return [...(this.cursorsOf.get(member) ?? [])].sort(([a], [b]) => {
      const x = threadOf(a);
      const y = threadOf(b);
      return x < y ? -1 : x > y ? 1 : 0;
    });
  }

  /** Every cursor in `stream`, by member. */
  cursorsIn(stream: StreamId): [string, Cursor][] {
    const out: [string, Cursor][] = [];
    for (const [member, mine] of this.cursorsOf) {
      const c = mine.get(stream);
      if (c !== undefined) out.push([member, c]);
    }
    return out;
  }

  /** A new cursor at `at` (acknowledged up to it, joined there, and everything to it counted as delivered). */
  setCursor(member: string, stream: StreamId, at: number, delivered = at): Cursor {
    let mine = this.cursorsOf.get(member);
    if (mine === undefined) {
      mine = new Map();
      this.cursorsOf.set(member, mine);
    }
    const c: Cursor = { acked: at, joined: at, delivered, expired: 0, above: new Set(), counts: new Map() };
    mine.set(stream, c);
    return c;
  }

  dropCursor(member: string, stream: StreamId): void {
    this.cursorsOf.get(member)?.delete(stream);
  }

  /** The stream's newest number (0 for an inbox not made yet). */
  last(stream: StreamId): number {
    return this.sequences.get(stream)?.last ?? 0;
  }

  /** The stream's newest number, or undefined when it has none yet (an inbox not made, a group gone). */
  head(stream: StreamId): number | undefined {
    return this.sequences.get(stream)?.last;
  }

  hasInbox(principal: string): boolean {
    return this.sequences.has(inboxStream(principal));
  }

  /** Take the next number of `stream`, making an inbox (and its cursor) on its first message (flock_inbox_take). */
  take(stream: StreamId): number {
    let s = this.sequences.get(stream);
    if (s === undefined) {
      s = { last: 0, messages: [] };
      this.sequences.set(stream, s);
      if (threadOf(stream) === INBOX_THREAD && this.cursor(stream, stream) === undefined)
        this.setCursor(stream, stream, 0);
    }
    return ++s.last;
  }

  /** Record a message numbered `seq` in `stream` (just taken). */
  put(
    stream: StreamId,
    seq: number,
    m: {
      id: bigint;
      threadId: bigint;
      sender: string;
      recipient: string | null;
      body: string;
      createdAt: Date;
      attachments?: StoredAttachment[];
      reply?: Quote;
      idempotencyKey?: string;
    },
  ): void {
    const stored: StoredMessage = {
      row: {
        id: m.id,
        thread_id: m.threadId,
        sender: m.sender,
        recipient: m.recipient,
        body: m.body,
        created_at: new Date(m.createdAt.getTime()),
        attachments: m.attachments?.length ? structuredClone(m.attachments) : null,
        reply: m.reply ? structuredClone(m.reply) : null,
      },
      stream,
      seq,
      idempotencyKey: m.idempotencyKey,
    };
    this.sequences.get(stream)!.messages[seq - 1] = stored;
    this.messages.set(String(m.id), stored);
  }

  /** The messages of `stream` numbered above `after`, in order. */
  after(stream: StreamId, after: number): StoredMessage[] {
    return this.sequences.get(stream)?.messages.slice(Math.max(0, after)) ?? [];
  }

  /** A message as a publish or a read carries it: JSON as shown at `horizon`, with its sender as it is now. */
  payload(m: StoredMessage, horizon: bigint): string {
    const p = this.principals.get(m.row.sender);
    return JSON.stringify(
      toMessageAt({ ...m.row, sender_name: p?.name ?? null, sender_avatar: p?.avatar ?? null }, horizon),
    );
  }

  published(m: StoredMessage, horizon: bigint): Published {
    return { key: m.stream, seq: m.seq, id: String(m.row.id), payload: this.payload(m, horizon) };
  }

  /**
   * Acknowledge number `seq` of `stream` for `member` (through it with every earlier one when `through`): the cursor
   * after it, or -1 when the member may not (no cursor there, or it came before they joined). flock_stream_ack.
   */
  streamAck(member: string, stream: StreamId, seq: number, through: boolean): number {
    const c = this.cursor(member, stream);
    if (c === undefined || seq <= c.joined) return -1;
    if (seq <= c.acked) return c.acked;
    if (!through && seq > c.acked + 1) {
      c.above.add(seq);
      return c.acked;
    }
    let upto = seq;
    while (c.above.has(upto + 1)) upto++;
    for (const s of c.above) if (s <= upto) c.above.delete(s);
    c.acked = upto;
    return upto;
  }

  /**
   * Retention's pass over the cursors (expireCursors, from nothing up to `horizon`): every cursor behind a message
   * that went moves past it (not past a number still kept), as a cumulative ack, and counts in `expired` the ones it
   * had not acknowledged.
   */
  expire(horizon: bigint): void {
    for (const [stream, s] of this.sequences) {
      const gone = s.messages.filter((m) => m.row.id < horizon);
      if (gone.length === 0) continue;
      const kept = s.messages.filter((m) => m.row.id >= horizon).map((m) => m.seq);
      const firstKept = kept.length > 0 ? Math.min(...kept) : undefined;
      let upto = Math.max(...gone.map((m) => m.seq));
      if (firstKept !== undefined) upto = Math.min(upto, firstKept - 1);
      for (const [member, c] of this.cursorsIn(stream)) {
        if (upto <= c.acked) continue;
        let lost = upto - c.acked;
        for (const a of c.above) if (a > c.acked && a <= upto) lost--;
        c.expired += lost;
        this.streamAck(member, stream, upto, true);
      }
    }
  }
}
