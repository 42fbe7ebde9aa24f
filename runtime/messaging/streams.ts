// The streams of messages (docs/ARCHITECTURE.md, "Messages"): every principal's inbox and every group. Part of the
// hub (svc.hub.streams): a committed message is offered to this node's live sockets (Channels), appended to its
// stream's log and announced to every other node in one step (runtime/engines/stream-log.ts), and wakes the long polls
// waiting on its stream on every node. What it is built of, one job each: reading the streams (stream-reads.ts),
// recording what was handed out (handouts.ts), who takes which stream (memberships.ts), finding what a publish that
// never came left behind (position-check.ts); a socket's catch-up is catch-up.ts.
import { randomBytes } from "node:crypto";
import { CHANNELS, listen, publish, type StreamMessage } from "../engines/node-channels.ts";
import { timed } from "../metrics.ts";
import type { Core } from "../services.ts";
import { Channels, type RecentFrames } from "./channels.ts";
import type { StreamStore } from "./core-stores.ts";
import { HandOuts } from "./handouts.ts";
import { Memberships } from "./memberships.ts";
import { PositionCheck } from "./position-check.ts";
import { StreamReads } from "./stream-reads.ts";
import type { Published } from "./stream-store.ts";
import { parseStreamId, type StreamId } from "./stream-id.ts";
import type { WaiterRegistry } from "./waiters.ts";

export { GROUPS_TTL_MS, type StreamMember } from "./memberships.ts";

export class StreamDelivery {
  readonly channels: Channels;
  /** Reads past members' cursors, and of a stream after a number. */
  readonly reads: StreamReads;
  /** Sockets' marks, and what long polls got while Postgres was away. */
  readonly handOuts: HandOuts;
  /** Which streams each principal takes, and the sockets taking them. */
  readonly memberships: Memberships;
  /** This node's streams held against Postgres's numbers (startNode runs it every CHECK_MS; tests call pass()). */
  readonly check: PositionCheck;
  private readonly origin = randomBytes(6).toString("hex");
  private readonly unsubscribe: (() => Promise<void>)[] = [];

  constructor(
    private readonly svc: Core,
    private readonly store: StreamStore,
    private readonly frames: RecentFrames,
    private readonly waiters: WaiterRegistry,
  ) {
    this.handOuts = new HandOuts(store);
    this.reads = new StreamReads(svc, store, this.handOuts, waiters);
    this.memberships = new Memberships(svc, store, this.origin);
    this.channels = new Channels(
      frames,
      (key, after, limit) => this.reads.readAfter(key, after, limit),
      (err) => svc.log.warn({ err }, "stream gap not filled; retrying"),
      svc.metrics.delivered.websocket,
    );
    this.check = new PositionCheck(svc, store, this.channels, waiters);
  }

  async start(): Promise<void> {
    const ps = this.svc.engines.pubsub;
    this.unsubscribe.push(
      await listen(ps, CHANNELS.streamMessage, this.svc.log, (m) => this.received(m)),
      await listen(ps, CHANNELS.groupMembers, this.svc.log, (e) => this.memberships.received(e)),
      await listen(ps, CHANNELS.messageUpdate, this.svc.log, (e) => {
        const key = this.streamOf(CHANNELS.messageUpdate.name, e.key);
        if (e.origin !== this.origin && key !== undefined) this.swap(key, e.id, e.payload);
      }),
    );
    this.memberships.startSweeps();
  }

  /**
   * A message was committed: publish it to this node's sockets in order, wake the long polls waiting on its stream
   * here, and tell every other node. Rejects when Redis cannot be reached: this node's sockets and waiters have it
   * already; the other nodes' position checks find it in Postgres (position-check.ts).
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

  /** A stream's messages numbered above `after`, at most `limit` (StreamReads.readAfter). */
  readAfter(key: StreamId, after: number, limit: number): Promise<Published[]> {
    return this.reads.readAfter(key, after, limit);
  }

  /** Offer a committed message to this node's sockets and long polls; `remote`: it came from another node, with its trace context. */
  private local(m: Published, remote?: { traceparent?: string }): void {
    const t = this.svc.tracing;
    if (t !== undefined)
      return t.deliver(m, remote, () => [this.channels.offer(m), this.waiters.wake(m.key, m.id, m.seq)]);
    this.channels.offer(m);
    this.waiters.wake(m.key, m.id, m.seq);
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

  /** Members joined or left a group, after the commit (Memberships.membersChanged). */
  membersChanged(thread: bigint, joined: { member: string; acked: number }[], left: string[]): Promise<void> {
    return this.memberships.membersChanged(thread, joined, left);
  }

  /** The streams of `member`, its inbox first (Memberships.streamsOf). */
  streamsOf(member: string, orNone = true): Promise<StreamId[]> {
    return this.memberships.streamsOf(member, orNone);
  }

  /** Check the streams of this node's sockets against the store (Memberships.sweep). */
  sweep(): Promise<void> {
    return this.memberships.sweep();
  }

  async close(): Promise<void> {
    this.memberships.stopSweeps();
    await this.check.stop();
    this.channels.close();
    await Promise.all([this.reads.drain(), this.handOuts.drain(), this.memberships.drain()]);
    await Promise.all(this.unsubscribe.map((u) => u().catch(() => {})));
  }
}
