// The streams of messages (docs/ARCHITECTURE.md, "Messages"): every principal's inbox and every group. Part of the
// hub (svc.hub.streams): a committed message is offered to this node's live sockets (Channels), appended to its
// stream's log and announced to every other node in one step (runtime/engines/stream-log.ts), and wakes the long polls
// waiting on its stream on every node. Sockets register here by principal so that joining or leaving a group reaches
// their connections at once, on every node.
import { randomBytes } from "node:crypto";
import { Batcher } from "../batcher.ts";
import { contiguous } from "../engines/stream-log.ts";
import { CHANNELS, type ChannelMessage, listen, publish, type StreamMessage } from "../engines/node-channels.ts";
import { outageOf, unavailable } from "../circuit.ts";
import { timed } from "../metrics.ts";
import type { Core } from "../services.ts";
import { Channels, type ChannelReader, type RecentFrames } from "./channels.ts";
import {
  type Backlog,
  backlog,
  type Read,
  markLive,
  messagesAfter,
  messagesById,
  type Published,
  type PollRead,
  type StreamEntry,
  streamsOfMembers,
} from "./stream-store.ts";
import { groupStream, inboxStream, isGroupStream, parseStreamId, type StreamId, threadOf } from "./stream-id.ts";
import type { WaiterRegistry } from "./waiters.ts";
import { addTo, removeFrom } from "../set-map.ts";

/**
 * How long a node trusts what it read of a principal's groups (long polls ask on every poll). Joining or leaving
 * reaches every node at once by pub/sub; this bounds how long a change whose event was lost (a Redis restart) goes
 * unseen by a long poll.
 */
export const GROUPS_TTL_MS = 5000;
const GROUPS_CACHE_MAX = 100_000;
/**
 * How often a node checks its sockets' groups against Postgres (StreamDelivery.sweep): the net under a lost membership
 * event for sockets, so one removed from a group stops getting its messages within this, not at its next reconnect.
 */
const SOCKET_GROUPS_SWEEP_MS = 30_000;
/** Principals read per statement by a sweep. */
const SWEEP_CHUNK = 1000;

/** A socket that takes its principal's streams live (a WebSocket session). */
export interface StreamMember extends ChannelReader {
  /** A stream of its principal's (its inbox; a group it is in or joined): catch up on it and take it live. */
  streamJoined(stream: StreamId): void;
  /** Its principal left a group: stop taking its stream (an inbox is never left). */
  streamLeft(stream: StreamId): void;
  /** The streams it takes, or is catching up on. */
  heldStreams(): Iterable<StreamId>;
}

export class StreamDelivery {
  readonly channels: Channels;
  private readonly members = new Map<string, Set<StreamMember>>();
  /** The streams of principals that long poll here, as read at `at` (the node's clock). */
  private readonly known = new Map<string, { streams: StreamId[]; at: number }>();
  /** The read of a principal's streams under way, `changed` once a membership event overtook it. */
  private readonly reading = new Map<string, { done: Promise<StreamId[]>; changed: boolean }>();
  /** "<member> <stream>" whose cursor this node has put into the remembered cursors (StreamCursorCache). */
  private readonly cursorsKept = new Set<string>();
  /** "<member> <stream>" -> the last number a poll got while Postgres was away (not yet in delivered_seq). */
  private readonly handedAway = new Map<string, number>();
  /** delivered_seq marks of sockets (stream-store.ts markLive): those arriving while one statement runs go in the next. */
  private readonly marks: Batcher<{ member: string; stream: StreamId; seq: number | null }, undefined>;
  /**
   * Which groups principals are in, for long polls: those asking while one read runs go in the next, so 10,000 polls
   * starting together cost a few statements, not 10,000 (on the embedded database, which runs in this process, they
   * held the event loop long enough to answer polls late).
   */
  private readonly streamReads: Batcher<string, StreamId[]>;
  /** Reads past cursors (long polls, catch-ups): those asking while one statement runs go in the next, together. */
  private readonly reads: Batcher<Read, Backlog>;
  private readonly origin = randomBytes(6).toString("hex");
  /** While a sweep reads, the principals a membership event reached meanwhile (the sweep's read of them is stale). */
  private sweepOvertaken: Set<string> | undefined;
  private sweepTimer: NodeJS.Timeout | undefined;
  private readonly unsubscribe: (() => Promise<void>)[] = [];

  constructor(
    private readonly svc: Core,
    private readonly frames: RecentFrames,
    private readonly waiters: WaiterRegistry,
  ) {
    this.channels = new Channels(
      frames,
      (key, after, limit) => this.readAfter(key, after, limit),
      (err) => svc.log.warn({ err }, "stream gap not filled; retrying"),
      svc.metrics.delivered.websocket,
    );
    this.streamReads = new Batcher(
      async (members) => {
        const got = await streamsOfMembers(svc.sql, members);
        return members.map((m) => got.get(m) ?? [inboxStream(m)]);
      },
      1,
      1000,
    );
    this.reads = new Batcher((items) => backlog(svc.sql, items, svc.horizons.messages()), 2, 256);
    this.marks = new Batcher(
      async (items) => {
        await markLive(svc.sql, items);
        return items.map(() => undefined);
      },
      1,
      1000,
    );
  }

  async start(): Promise<void> {
    const ps = this.svc.engines.pubsub;
    this.unsubscribe.push(
      await listen(ps, CHANNELS.streamMessage, this.svc.log, (m) => this.received(m)),
      await listen(ps, CHANNELS.groupMembers, this.svc.log, (e) => this.membersReceived(e)),
      await listen(ps, CHANNELS.messageUpdate, this.svc.log, (e) => {
        const key = this.streamOf(CHANNELS.messageUpdate.name, e.key);
        if (e.origin !== this.origin && key !== undefined) this.swap(key, e.id, e.payload);
      }),
    );
    this.sweepTimer = setInterval(() => {
      this.sweep().catch((err: unknown) =>
        this.svc.log.warn({ err }, "sockets' groups not checked; next sweep retries"),
      );
    }, SOCKET_GROUPS_SWEEP_MS);
    this.sweepTimer.unref();
  }

  /**
   * A message was committed: publish it to this node's sockets in order, wake the long polls waiting on its stream
   * here, and tell every other node. Rejects when pub/sub cannot be reached (the message stays in flight, and the
   * reconciler publishes it again; sockets that missed it meanwhile are caught up by their node's gap timer).
   */
  async deliver(m: Published): Promise<void> {
    this.local(m);
    // traced, the send's context goes to the other nodes with the message (runtime/tracing.ts)
    const t = this.svc.tracing;
    if (t !== undefined) return t.publish(m, (traceparent) => this.append(m, traceparent));
    await this.append(m);
  }

  /** Append to the stream's log and announce to every node, in one script call (runtime/engines/stream-log.ts). */
  private append(m: Published, traceparent?: string): Promise<void> {
    const ch = CHANNELS.streamMessage;
    const head = ch.head({ ...m, origin: this.origin }, traceparent);
    return timed(this.svc.metrics.redis.streamAppend, () => this.svc.engines.streams.append(m, ch.name, head));
  }

  /**
   * A committed message was edited or deleted: `m` carries it as it is now. This node's copies are swapped, the
   * stream's shared log is dropped (its copy is stale: readers go to Postgres until it fills again), and every node
   * is told, to swap its copies and tell the connections of `to` (runtime/ws/realtime.ts). Rejects when Redis
   * cannot be reached: the change is committed, and Postgres (history, redelivery) has it.
   */
  async changed(m: Published, to: string[]): Promise<void> {
    this.swap(m.key, m.id, m.payload);
    await this.svc.engines.streams.drop(m.key);
    await publish(this.svc.engines.pubsub, CHANNELS.messageUpdate, {
      origin: this.origin,
      key: m.key,
      id: m.id,
      payload: m.payload,
      to,
    });
  }

  private swap(key: StreamId, id: string, payload: string): void {
    this.channels.replace(key, id, payload);
    this.frames.forget(id);
  }

  /**
   * A stream's messages numbered above `after`, at most `limit`: from its log as far as the log holds them without a
   * hole from `after` on, else from Postgres (a log trimmed past `after`, expired, flushed or out of reach, or an
   * append that never ran: the sender died between commit and append).
   */
  async readAfter(key: StreamId, after: number, limit: number): Promise<Published[]> {
    const logged = await this.svc.engines.streams.after(key, after).catch(() => []);
    // a log renewed by each append may hold messages past retention's horizon: those are gone (a hole: Postgres)
    const run = contiguous(this.kept(logged), after);
    if (run.length > 0) return run.slice(0, limit);
    return messagesAfter(this.svc.sql, key, after, limit, this.svc.horizons.messages());
  }

  /** Of a log's entries, those retention keeps (all, when it is unlimited). */
  private kept(logged: Published[]): Published[] {
    const horizon = this.svc.horizons.messages();
    return horizon === 0n ? logged : logged.filter((m) => BigInt(m.id) >= horizon);
  }

  /** Publish committed messages again, read from Postgres by id (the reconciler's: their sender died). */
  async redeliver(ids: string[]): Promise<Set<string>> {
    const found = await messagesById(this.svc.sql, ids, this.svc.horizons.messages());
    await Promise.all(found.map((m) => this.deliver(m)));
    return new Set(found.map((m) => m.id));
  }

  /** Offer a committed message to this node's sockets and long polls; `remote`: it came from another node, with its trace context. */
  private local(m: Published, remote?: { traceparent?: string }): void {
    const t = this.svc.tracing;
    if (t !== undefined) return t.deliver(m, remote, () => [this.channels.offer(m), this.waiters.wake(m.key, m.id)]);
    this.channels.offer(m);
    this.waiters.wake(m.key, m.id);
  }

  private received(m: StreamMessage): void {
    if (m.origin === this.origin) return;
    const key = this.streamOf(CHANNELS.streamMessage.name, m.key);
    if (key !== undefined) this.local({ key, seq: m.seq, id: m.id, payload: m.payload }, m);
  }

  /** The stream another node's message names, or undefined (logged: dropped as a malformed message is). */
  private streamOf(channel: string, raw: string): StreamId | undefined {
    const id = parseStreamId(raw);
    if (id === undefined) this.svc.log.warn({ channel }, "malformed stream id from another node dropped");
    return id;
  }

  /**
   * A long poll's read of `member`'s streams, at most `limit` in all: past their cursors in Postgres, merged oldest
   * first (each stream's part contiguous from its cursor), recorded as handed out by the read itself; while
   * Postgres is out of reach, from the streams' logs past the cursors the engine remembers (each ack puts its cursor
   * there before it is answered), contiguous from each cursor, or a 503 when that cannot be had for every stream. Those count as possibly delivered before (2): this node cannot know.
   * `expired`: how many of the member's unacknowledged messages went past retention since a read last said so (the
   * read takes the count from the cursors, so each is reported once; 0 from the logs, which cannot say).
   */
  async readForPoll(member: string, streams: StreamId[], limit: number): Promise<PollRead> {
    const pg = this.svc.circuits.postgres;
    if (!pg.isOpen) {
      try {
        const b = await this.backlog(member, null, limit);
        this.keepCursors(member, b);
        let expired = 0;
        for (const c of b.cursors.values()) expired += c.expired;
        const out = merged(b.entries, limit);
        for (const e of out) {
          const away = this.handedAway.get(`${member} ${e.stream}`);
          if (away !== undefined && e.seq <= away && e.deliveryCount < 2) e.deliveryCount = 2;
        }
        return { entries: out, expired };
      } catch (err) {
        if (outageOf(err) !== "postgres") throw err;
        pg.open(err);
      }
    }
    return { entries: await this.fromLogs(member, streams, limit), expired: 0 };
  }

  private keepCursors(member: string, b: Backlog): void {
    for (const [stream, c] of b.cursors) {
      const key = `${member} ${stream}`;
      if (this.cursorsKept.has(key)) continue;
      if (this.cursorsKept.size >= GROUPS_CACHE_MAX) this.cursorsKept.clear();
      this.cursorsKept.add(key);
      this.svc.engines.streamCursors
        .merge([{ member, thread: threadOf(stream), acked: c.acked, above: c.above, ifAbsent: true }])
        .catch(() => this.cursorsKept.delete(key));
    }
  }

  private async fromLogs(member: string, streams: StreamId[], limit: number): Promise<StreamEntry[]> {
    const cursors = await this.svc.engines.streamCursors.read(member, streams.map(threadOf));
    const cursorOf = (stream: StreamId) => cursors.get(threadOf(stream));
    const logs = await Promise.all(
      streams.map((stream) => this.svc.engines.streams.after(stream, cursorOf(stream)?.acked ?? 0)),
    );
    const own = `"from":{"id":${JSON.stringify(member)},`;
    const out: StreamEntry[] = [];
    streams.forEach((stream, i) => {
      const c = cursorOf(stream);
      const logged = this.kept(logs[i]!);
      const group = isGroupStream(stream);
      // an inbox never written to has no cursor yet: nothing to hand out
      if (c === undefined && (group || logged.length > 0)) throw unavailable("postgres");
      if (c === undefined) return;
      // what follows the cursor must be had from its first number on: a hole would let a cumulative ack take it
      if (logged.length > 0 && logged[0]!.seq > c.acked + 1) throw unavailable("postgres");
      const above = new Set(c.above);
      for (const m of contiguous(logged, c.acked)) {
        if (above.has(m.seq) || (group && m.payload.includes(own))) continue; // acknowledged already, or the member's own
        if (out.length >= limit) break;
        out.push({ stream, seq: m.seq, id: m.id, payload: m.payload, deliveryCount: 2 });
        const key = `${member} ${stream}`;
        this.handedAway.set(key, Math.max(this.handedAway.get(key) ?? 0, m.seq));
      }
    });
    if (this.handedAway.size > GROUPS_CACHE_MAX) this.handedAway.clear();
    return out;
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
    this.applyMembers(thread, ids, left);
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

  private membersReceived(e: ChannelMessage<typeof CHANNELS.groupMembers>): void {
    if (e.origin === this.origin) return;
    this.applyMembers(BigInt(e.thread), e.joined, e.left);
  }

  private applyMembers(thread: bigint, joined: string[], left: string[]): void {
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
        const truth = await streamsOfMembers(this.svc.sql, chunk);
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

  /** Read past `member`'s cursor in one stream, or in all its streams (null); see stream-store.ts backlog. */
  backlog(member: string, stream: StreamId | null, limit: number, after = 0): Promise<Backlog> {
    return this.reads.push({ member, stream, limit, after });
  }

  /** A socket starts (`seq` null) or stops (the last number published to it) taking a stream live. */
  mark(member: string, stream: StreamId, seq: number | null): Promise<void> {
    return this.marks.push({ member, stream, seq }).then(() => undefined);
  }

  async close(): Promise<void> {
    clearInterval(this.sweepTimer);
    this.channels.close();
    await Promise.all([this.reads.drain(), this.marks.drain(), this.streamReads.drain()]);
    await Promise.all(this.unsubscribe.map((u) => u().catch(() => {})));
  }
}

/**
 * A read's entries (each stream's in its own order, contiguous from its cursor), merged oldest first by id, at most
 * `limit`: a merge of ordered runs (within a stream number order can differ from id order), so the cut at `limit`
 * drops only the ends of runs, and what a poll gets of a stream is still contiguous from the cursor.
 */
export function merged(entries: StreamEntry[], limit: number): StreamEntry[] {
  const runs: StreamEntry[][] = [];
  let run: StreamEntry[] = [];
  let stream: StreamId | undefined;
  for (const e of entries) {
    if (e.stream !== stream || run.length === 0) {
      run = [];
      runs.push(run);
      stream = e.stream;
    }
    run.push(e);
  }
  if (runs.length <= 1) return entries.slice(0, limit);
  const at = runs.map(() => 0);
  const older = (a: string, b: string) => a.length < b.length || (a.length === b.length && a < b);
  const out: StreamEntry[] = [];
  while (out.length < limit) {
    let pick = -1;
    for (let r = 0; r < runs.length; r++) {
      const head = runs[r]![at[r]!];
      if (head !== undefined && (pick < 0 || older(head.id, runs[pick]![at[pick]!]!.id))) pick = r;
    }
    if (pick < 0) break;
    out.push(runs[pick]![at[pick]!++]!);
  }
  return out;
}
