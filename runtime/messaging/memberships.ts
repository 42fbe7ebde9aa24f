// Which streams each principal takes, as this node knows it (docs/ARCHITECTURE.md, "Messages"): a principal's inbox
// and its groups, read from the store in batches and kept a while for its long polls and sockets; the sockets that
// take a principal's streams, told at once, on every node, when it joins or leaves a group; and the sweep that checks
// those sockets' streams against the store, the net under a membership event that was lost.
import { Batcher } from "../batcher.ts";
import { outageOf } from "../circuit.ts";
import { CHANNELS, type ChannelMessage, publish } from "../engines/node-channels.ts";
import type { Core } from "../services.ts";
import { addTo, removeFrom } from "../set-map.ts";
import type { StreamStore } from "./core-stores.ts";
import { groupStream, inboxStream, type StreamId } from "./stream-id.ts";

/**
 * How long a node trusts what it read of a principal's groups (long polls ask on every poll). Joining or leaving
 * reaches every node at once by pub/sub; this bounds how long a change whose event was lost (a Redis restart) goes
 * unseen by a long poll.
 */
export const GROUPS_TTL_MS = 5000;
const GROUPS_CACHE_MAX = 100_000;
/**
 * How often a node checks its sockets' groups against Postgres (Memberships.sweep): the net under a lost membership
 * event for sockets, so one removed from a group stops getting its messages within this, not at its next reconnect.
 */
const SOCKET_GROUPS_SWEEP_MS = 30_000;
/** Principals read per statement by a sweep. */
const SWEEP_CHUNK = 1000;

/** A socket that takes its principal's streams live (a WebSocket session's: runtime/messaging/catch-up.ts). */
export interface StreamMember {
  /** A stream of its principal's (its inbox; a group it is in or joined): catch up on it and take it live. */
  streamJoined(stream: StreamId): void;
  /** Its principal left a group: stop taking its stream (an inbox is never left). */
  streamLeft(stream: StreamId): void;
  /** Its principal blocked or unblocked someone (runtime/social/blocks.ts): whose group messages it hides changed. */
  relationsChanged?(): void;
  /** The streams it takes, or is catching up on. */
  heldStreams(): Iterable<StreamId>;
}

export class Memberships {
  private readonly members = new Map<string, Set<StreamMember>>();
  /** The streams of principals that long poll here, as read at `at` (the node's clock). */
  private readonly known = new Map<string, { streams: StreamId[]; at: number }>();
  /** The read of a principal's streams under way, `changed` once a membership event overtook it. */
  private readonly reading = new Map<string, { done: Promise<StreamId[]>; changed: boolean }>();
  /**
   * Which groups principals are in, for long polls: those asking while one read runs go in the next, so 10,000 polls
   * starting together cost a few statements, not 10,000 (on the embedded database, which runs in this process, they
   * held the event loop long enough to answer polls late).
   */
  private readonly streamReads: Batcher<string, StreamId[]>;
  /** While a sweep reads, the principals a membership event reached meanwhile (the sweep's read of them is stale). */
  private sweepOvertaken: Set<string> | undefined;
  private sweepTimer: NodeJS.Timeout | undefined;

  constructor(
    private readonly svc: Pick<Core, "engines" | "log" | "now">,
    private readonly store: StreamStore,
    /** This node's mark on what it publishes (its own membership events come back to it). */
    private readonly origin: string,
  ) {
    this.streamReads = new Batcher(
      async (members) => {
        const got = await store.streamsOf(members);
        return members.map((m) => got.get(m) ?? [inboxStream(m)]);
      },
      1,
      1000,
    );
  }

  /** Sweep every SOCKET_GROUPS_SWEEP_MS from now on (until `stopSweeps`). */
  startSweeps(): void {
    this.sweepTimer = setInterval(() => {
      this.sweep().catch((err: unknown) =>
        this.svc.log.warn({ err }, "sockets' groups not checked; next sweep retries"),
      );
    }, SOCKET_GROUPS_SWEEP_MS);
    this.sweepTimer.unref();
  }

  stopSweeps(): void {
    clearInterval(this.sweepTimer);
  }

  /** A socket of `principal` takes its streams live through here; returns the function that removes it. */
  register(principal: string, member: StreamMember): () => void {
    addTo(this.members, principal, member);
    return () => void removeFrom(this.members, principal, member);
  }

  /**
   * Members joined (with their new cursors) or left a group, after the commit: their sockets on every node follow,
   * and the new cursors are remembered (one who left and came back must not be read from where they left).
   */
  async membersChanged(thread: bigint, joined: { member: string; acked: number }[], left: string[]): Promise<void> {
    const ids = joined.map((j) => j.member);
    this.apply(thread, ids, left);
    await Promise.all([
      publish(this.svc.engines.pubsub, CHANNELS.groupMembers, {
        origin: this.origin,
        thread: String(thread),
        joined: ids,
        left,
      }),
      this.svc.engines.streamCursors.merge(
        joined.map((j) => ({ member: j.member, thread, acked: j.acked, above: [] })),
      ),
    ]);
  }

  /** `principal`'s blocks changed (heard on this node, from any node): its sockets here read them again. */
  relationsChanged(principal: string): void {
    for (const m of [...(this.members.get(principal) ?? [])]) m.relationsChanged?.();
  }

  /** Another node's membership event (CHANNELS.groupMembers). */
  received(e: ChannelMessage<typeof CHANNELS.groupMembers>): void {
    if (e.origin === this.origin) return;
    this.apply(BigInt(e.thread), e.joined, e.left);
  }

  private apply(thread: bigint, joined: string[], left: string[]): void {
    const stream = groupStream(thread);
    for (const p of [...joined, ...left]) {
      this.known.delete(p);
      this.sweepOvertaken?.add(p);
      const read = this.reading.get(p);
      if (read !== undefined) {
        read.changed = true;
        this.reading.delete(p);
      }
    }
    for (const p of joined) for (const m of [...(this.members.get(p) ?? [])]) m.streamJoined(stream);
    for (const p of left) for (const m of [...(this.members.get(p) ?? [])]) m.streamLeft(stream);
  }

  /**
   * Check the groups of every principal with a socket here against Postgres, and have each socket join or leave what
   * differs: what a lost membership event (a Redis restart) would leave wrong until the socket reconnects. A principal
   * whose membership changed while its groups were read is left to that change. Every SOCKET_GROUPS_SWEEP_MS.
   */
  async sweep(): Promise<void> {
    if (this.sweepOvertaken !== undefined) return;
    const principals = [...this.members.keys()];
    this.sweepOvertaken = new Set();
    try {
      for (let i = 0; i < principals.length; i += SWEEP_CHUNK) {
        const chunk = principals.slice(i, i + SWEEP_CHUNK);
        this.sweepOvertaken.clear();
        const truth = await this.store.streamsOf(chunk);
        for (const p of chunk) {
          if (this.sweepOvertaken.has(p)) continue;
          const should = new Set(truth.get(p) ?? []);
          for (const m of [...(this.members.get(p) ?? [])]) {
            const held = new Set(m.heldStreams());
            for (const stream of held) if (!should.has(stream)) m.streamLeft(stream);
            for (const stream of should) if (!held.has(stream)) m.streamJoined(stream);
          }
        }
      }
    } finally {
      this.sweepOvertaken = undefined;
    }
  }

  /**
   * The streams of `member` (for its long polls and sockets): its inbox, then its groups, read again after it joins or
   * leaves one. What was read answers at once; past GROUPS_TTL_MS (the net under a lost membership event) it is read
   * again behind the answer, so a poll never waits on Postgres for groups it already knows. With nothing read yet it
   * waits for the read; with Postgres away then, a long poll's (`orNone`) gets its inbox alone, and a socket's start
   * fails and retries.
   */
  async streamsOf(member: string, orNone = true): Promise<StreamId[]> {
    const hit = this.known.get(member);
    if (hit !== undefined) {
      if (this.svc.now() - hit.at >= GROUPS_TTL_MS) this.readStreams(member).catch(() => {});
      return hit.streams;
    }
    try {
      return await this.readStreams(member);
    } catch (err) {
      if (outageOf(err) === "postgres" && orNone) return [inboxStream(member)];
      throw err;
    }
  }

  /** One read of `member`'s streams at a time; kept unless its membership changed while the read ran. */
  private readStreams(member: string): Promise<StreamId[]> {
    const running = this.reading.get(member);
    if (running !== undefined) return running.done;
    const at = this.svc.now();
    const read: { done: Promise<StreamId[]>; changed: boolean } = { done: Promise.resolve([]), changed: false };
    read.done = this.streamReads
      .push(member)
      .then((streams) => {
        if (!read.changed) {
          if (this.known.size >= GROUPS_CACHE_MAX) this.known.clear();
          this.known.set(member, { streams, at });
        }
        return streams;
      })
      .finally(() => {
        if (this.reading.get(member) === read) this.reading.delete(member);
      });
    this.reading.set(member, read);
    return read.done;
  }

  /** Resolves once the reads of streams taken are done. */
  drain(): Promise<void> {
    return this.streamReads.drain();
  }
}
