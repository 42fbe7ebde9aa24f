// Group messages stored once, delivered live and read back (docs/ARCHITECTURE.md, "Group messages"). Part of the
// hub (svc.hub.groups): a committed group message is offered to this node's live sockets (GroupChannels) and to
// every other node over pub/sub, and wakes the long polls of the group's members on every node. Sockets register
// here by principal so that joining or leaving a group reaches their connections at once, on every node.
import { randomBytes } from "node:crypto";
import { Batcher } from "../batcher.ts";
import type { Core } from "../services.ts";
import { GroupChannels, type GroupMessage, type GroupReader } from "./group-channels.ts";
import { type Backlog, type GroupCursor, groupBacklog, groupCursors, groupMessagesAfter, groupMessagesById, markLive } from "./group-store.ts";
import type { RecentFrames } from "./handout.ts";
import type { WaiterRegistry } from "./waiters.ts";
import { addTo, removeFrom } from "../set-map.ts";

/** Pub/sub channel of committed group messages: `<origin> <thread> <seq> <id> <payload>`. */
const MESSAGE_CHANNEL = "group.message";
/** Pub/sub channel of membership changes: JSON {origin, thread, joined, left}. */
const MEMBERS_CHANNEL = "group.members";

/**
 * How long a node trusts what it read of a principal's groups (long polls ask on every poll). Joining or leaving
 * reaches every node at once by pub/sub; this bounds how long a change whose event was lost (a Redis restart) goes
 * unseen by a long poll.
 */
export const GROUPS_TTL_MS = 5000;
const GROUPS_CACHE_MAX = 100_000;

/** The key long polls wait under for a group's messages (a principal id never starts with `g:`). */
export const groupWaitKey = (thread: bigint) => `g:${thread}`;

/** A socket that takes its principal's groups live (a WebSocket session). */
export interface GroupMember extends GroupReader {
  /** Its principal joined a group: catch up on it and take it live. */
  groupJoined(thread: bigint): void;
  /** Its principal left a group: stop taking it. */
  groupLeft(thread: bigint): void;
}

export class GroupDelivery {
  readonly channels: GroupChannels;
  private readonly members = new Map<string, Set<GroupMember>>();
  /** The groups of principals that long poll here, as read at `at` (the node's clock). */
  private readonly groupsOf = new Map<string, { threads: bigint[]; at: number }>();
  /** delivered_seq marks (group-store.ts markLive): those arriving while one statement runs go in the next. */
  private readonly marks: Batcher<{ member: string; thread: bigint; seq: number | null }, undefined>;
  private readonly origin = randomBytes(6).toString("hex");
  private readonly unsubscribe: (() => Promise<void>)[] = [];

  constructor(
    private readonly svc: Core,
    frames: RecentFrames,
    private readonly waiters: WaiterRegistry,
  ) {
    this.channels = new GroupChannels(
      frames,
      (thread, after, limit) => groupMessagesAfter(svc.sql, thread, after, limit),
      (err) => svc.log.warn({ err }, "group gap not filled; retrying"),
    );
    this.marks = new Batcher(async (items) => {
      await markLive(svc.sql, items);
      return items.map(() => undefined);
    }, 1, 1000);
  }

  async start(): Promise<void> {
    const ps = this.svc.engines.pubsub;
    this.unsubscribe.push(
      await ps.subscribe(MESSAGE_CHANNEL, (buf) => this.received(buf.toString())),
      await ps.subscribe(MEMBERS_CHANNEL, (buf) => this.membersReceived(buf.toString())),
    );
  }

  /**
   * A group message was committed: publish it to this node's sockets in order, wake the long polls waiting on the
   * group here, and tell every other node. Rejects when pub/sub cannot be reached (the message stays in flight, and
   * the reconciler publishes it again; sockets that missed it meanwhile are caught up by their node's gap timer).
   */
  async deliver(thread: bigint, m: GroupMessage): Promise<void> {
    this.local(thread, m);
    await this.svc.engines.pubsub.publish(MESSAGE_CHANNEL, `${this.origin} ${thread} ${m.seq} ${m.id} ${m.payload}`);
  }

  /** Publish committed group messages again, read from Postgres by id (the reconciler's: their sender died). */
  async redeliver(ids: string[]): Promise<Set<string>> {
    const found = await groupMessagesById(this.svc.sql, ids);
    await Promise.all(found.map((m) => this.deliver(m.thread, m)));
    return new Set(found.map((m) => m.id));
  }

  private local(thread: bigint, m: GroupMessage): void {
    this.channels.offer(thread, m);
    this.waiters.wake(groupWaitKey(thread), m.id);
  }

  private received(text: string): void {
    const parts = text.split(" ", 4);
    if (parts.length < 4 || parts[0] === this.origin) return;
    const [, thread, seq, id] = parts as [string, string, string, string];
    const payload = text.slice(parts.join(" ").length + 1);
    if (!/^\d+$/.test(thread) || !/^\d+$/.test(seq) || !/^\d+$/.test(id) || !payload.startsWith("{")) return;
    this.local(BigInt(thread), { seq: Number(seq), id, payload });
  }

  /** A socket of `principal` takes its groups live through here; returns the function that removes it. */
  register(principal: string, member: GroupMember): () => void {
    addTo(this.members, principal, member);
    return () => void removeFrom(this.members, principal, member);
  }

  /** Members joined or left a group (after the commit): their sockets on every node follow. */
  async membersChanged(thread: bigint, joined: string[], left: string[]): Promise<void> {
    this.applyMembers(thread, joined, left);
    await this.svc.engines.pubsub.publish(MEMBERS_CHANNEL, JSON.stringify({ origin: this.origin, thread: String(thread), joined, left }));
  }

  private membersReceived(text: string): void {
    let e: { origin?: unknown; thread?: unknown; joined?: unknown; left?: unknown };
    try {
      e = JSON.parse(text) as typeof e;
    } catch {
      return;
    }
    if (e.origin === this.origin || typeof e.thread !== "string" || !/^\d+$/.test(e.thread)) return;
    const ids = (v: unknown) => (Array.isArray(v) ? v.filter((x): x is string => typeof x === "string") : []);
    this.applyMembers(BigInt(e.thread), ids(e.joined), ids(e.left));
  }

  private applyMembers(thread: bigint, joined: string[], left: string[]): void {
    for (const p of joined) this.groupsOf.delete(p);
    for (const p of left) this.groupsOf.delete(p);
    for (const p of joined) for (const m of [...(this.members.get(p) ?? [])]) m.groupJoined(thread);
    for (const p of left) for (const m of [...(this.members.get(p) ?? [])]) m.groupLeft(thread);
  }

  cursors(member: string): Promise<GroupCursor[]> {
    return groupCursors(this.svc.sql, member);
  }

  /** The groups of `member` (for its long polls): read at most every GROUPS_TTL_MS, and again after it joins or leaves one. */
  async threads(member: string): Promise<bigint[]> {
    const now = this.svc.now();
    const hit = this.groupsOf.get(member);
    if (hit !== undefined && now - hit.at < GROUPS_TTL_MS) return hit.threads;
    const threads = (await this.cursors(member)).map((c) => c.thread);
    if (this.groupsOf.size >= GROUPS_CACHE_MAX) this.groupsOf.clear();
    this.groupsOf.set(member, { threads, at: now });
    return threads;
  }

  backlog(member: string, threads: bigint[] | null, limit: number, after = 0): Promise<Backlog> {
    return groupBacklog(this.svc.sql, member, threads, limit, after);
  }

  /** A socket starts (`seq` null) or stops (the last number published to it) taking a group live. */
  mark(member: string, thread: bigint, seq: number | null): Promise<void> {
    return this.marks.push({ member, thread, seq }).then(() => undefined);
  }

  async close(): Promise<void> {
    this.channels.close();
    await this.marks.drain();
    await Promise.all(this.unsubscribe.map((u) => u().catch(() => {})));
  }
}
