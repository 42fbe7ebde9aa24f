// Live group delivery on one node: for each group some of this node's sockets take live, the messages committed to it
// are published, in the order of their numbers, as one frame per encoding to a uWS topic those sockets are
// subscribed to (the per-socket writes happen in uWS's C++, not once per member in JavaScript). A socket first
// catches up from Postgres past its cursor, then subscribes without a hole (`join`), so what it receives of a group is
// contiguous from its cursor: that is what makes a cumulative ack safe (docs/ARCHITECTURE.md, "Group messages").
import type { Codec, Encoded } from "../ws/codec.ts";
import type { RecentFrames } from "./handout.ts";

/** What publishes a frame to every socket subscribed to a topic (the uWS app; a fake in unit tests). */
export interface TopicPublisher {
  publish(topic: string, data: Uint8Array | string, binary: boolean): void;
}

/** A socket taking groups live (a WebSocket session). */
export interface GroupReader {
  readonly codec: Codec;
  subscribe(topic: string): void;
  unsubscribe(topic: string): void;
  /** Write one frame to this socket alone (catching up from the recent frames); false when the socket is gone. */
  write(frame: Encoded): boolean;
}

/** A message of a group: its number, id and payload. */
export interface GroupMessage {
  seq: number;
  id: string;
  payload: string;
}

/** Reads a group's messages after a number from Postgres (runtime/messaging/group-store.ts). */
export type ReadAfter = (thread: bigint, after: number, limit: number) => Promise<GroupMessage[]>;

/** Recent messages kept per group, for a socket that subscribes a little behind the node. */
const RING = 256;
/** A gap (a number not seen while a later one was) is filled from Postgres after this long. */
export const GAP_MS = 250;
const FILL_PAGE = 100;

export const topicOf = (thread: bigint, codec: Codec) => `g:${thread}:${codec.name}`;

class Channel {
  /** The last number published on this node; undefined until the first socket has caught up. */
  published: number | undefined;
  /** Messages that came ahead of a gap, by number. */
  readonly pending = new Map<number, GroupMessage>();
  /** The last RING messages published, in order. */
  readonly ring: GroupMessage[] = [];
  readonly readers = new Set<GroupReader>();
  /** Sockets to subscribe once `published` reaches their number (they caught up further than this node had). */
  readonly joining = new Map<GroupReader, number>();
  /** Sockets catching up from Postgres (the channel collects what comes meanwhile). */
  warming = 0;
  gapTimer: NodeJS.Timeout | undefined;
  filling = false;

  get idle(): boolean {
    return this.readers.size === 0 && this.joining.size === 0 && this.warming === 0;
  }
}

export class GroupChannels {
  private readonly channels = new Map<bigint, Channel>();
  private publisher: TopicPublisher | undefined;
  private closed = false;

  constructor(
    private readonly frames: RecentFrames,
    private readonly readAfter: ReadAfter,
    private readonly onError: (err: unknown) => void,
  ) {}

  /** The uWS app, once the WebSocket route is mounted. */
  attach(publisher: TopicPublisher): void {
    this.publisher = publisher;
  }

  /** Groups with sockets on this node (tests). */
  get size(): number {
    return this.channels.size;
  }

  /** The last number this node published to a group, if it has sockets taking it. */
  published(thread: bigint): number | undefined {
    return this.channels.get(thread)?.published;
  }

  /** A message of `thread` was committed (from this node's send, or another's, by pub/sub): publish it in order. */
  offer(thread: bigint, m: GroupMessage): void {
    const ch = this.channels.get(thread);
    if (ch === undefined) return;
    if (ch.published !== undefined && m.seq <= ch.published) return;
    ch.pending.set(m.seq, m);
    this.drain(thread, ch);
  }

  /** A socket starts catching up on `thread` from Postgres: the channel collects what is committed meanwhile. */
  warm(thread: bigint): void {
    this.channel(thread).warming++;
  }

  /**
   * A socket that called `warm` caught up to `upTo` (the last number it wrote): subscribe it so that it gets every
   * message after that number exactly once. False when this node is further on than its recent messages reach back:
   * read Postgres past `upTo` again (the socket is still warming) and call again.
   */
  join(thread: bigint, reader: GroupReader, upTo: number): boolean {
    const ch = this.channel(thread);
    if (ch.published === undefined) {
      ch.published = upTo;
      for (const seq of ch.pending.keys()) if (seq <= upTo) ch.pending.delete(seq);
      ch.warming--;
      this.subscribe(thread, ch, reader);
      this.drain(thread, ch);
      return true;
    }
    if (ch.published >= upTo) {
      const from = ch.ring.findIndex((m) => m.seq === upTo + 1);
      if (ch.published > upTo && from < 0) return false;
      ch.warming--;
      if (ch.published > upTo) {
        for (const m of ch.ring.slice(from)) if (!reader.write(this.frames.of(m.id, 1, m.payload).for(reader.codec))) break;
      }
      this.subscribe(thread, ch, reader);
      return true;
    }
    ch.warming--;
    ch.joining.set(reader, upTo);
    this.armGap(thread, ch);
    return true;
  }

  /** A socket stops catching up without joining (it closed, or its read failed). */
  cool(thread: bigint): void {
    const ch = this.channels.get(thread);
    if (ch === undefined) return;
    ch.warming--;
    this.dropIfIdle(thread, ch);
  }

  /** A socket leaves a group (it closed, or left the group): the last number published to it, if it had joined. */
  leave(thread: bigint, reader: GroupReader): number | undefined {
    const ch = this.channels.get(thread);
    if (ch === undefined) return undefined;
    const was = ch.readers.delete(reader);
    ch.joining.delete(reader);
    if (was) reader.unsubscribe(topicOf(thread, reader.codec));
    const at = ch.published;
    this.dropIfIdle(thread, ch);
    return was ? at : undefined;
  }

  /** Fill every open gap from Postgres now (the gap timers do this after GAP_MS; tests call it by hand). */
  async fillGaps(): Promise<void> {
    await Promise.all([...this.channels].map(([thread, ch]) => this.fill(thread, ch)));
  }

  close(): void {
    this.closed = true;
    for (const ch of this.channels.values()) clearTimeout(ch.gapTimer);
    this.channels.clear();
  }

  private channel(thread: bigint): Channel {
    let ch = this.channels.get(thread);
    if (ch === undefined) {
      ch = new Channel();
      this.channels.set(thread, ch);
    }
    return ch;
  }

  private subscribe(thread: bigint, ch: Channel, reader: GroupReader): void {
    ch.readers.add(reader);
    reader.subscribe(topicOf(thread, reader.codec));
  }

  /** Publish what is next in order; a gap left behind arms its timer. */
  private drain(thread: bigint, ch: Channel): void {
    if (ch.published === undefined) return;
    for (;;) {
      const next = ch.pending.get(ch.published + 1);
      if (next === undefined) break;
      ch.pending.delete(next.seq);
      this.emit(thread, ch, next);
    }
    if (ch.pending.size > 0 || ch.joining.size > 0) this.armGap(thread, ch);
    else {
      clearTimeout(ch.gapTimer);
      ch.gapTimer = undefined;
    }
  }

  private emit(thread: bigint, ch: Channel, m: GroupMessage): void {
    ch.published = m.seq;
    ch.ring.push(m);
    if (ch.ring.length > RING) ch.ring.shift();
    const shared = this.frames.of(m.id, 1, m.payload);
    const done = new Set<string>();
    for (const r of ch.readers) {
      if (done.has(r.codec.name)) continue;
      done.add(r.codec.name);
      const f = shared.for(r.codec);
      this.publisher?.publish(topicOf(thread, r.codec), f.data, f.binary);
    }
    for (const [r, upTo] of ch.joining) {
      if (upTo !== m.seq) continue;
      ch.joining.delete(r);
      this.subscribe(thread, ch, r);
    }
  }

  private armGap(thread: bigint, ch: Channel): void {
    if (ch.gapTimer !== undefined || this.closed) return;
    ch.gapTimer = setTimeout(() => {
      ch.gapTimer = undefined;
      void this.fill(thread, ch);
    }, GAP_MS);
    ch.gapTimer.unref();
  }

  /** Read past the last number published from Postgres, so a message whose wake-up never came is published too. */
  private async fill(thread: bigint, ch: Channel): Promise<void> {
    if (ch.filling || ch.published === undefined || (ch.pending.size === 0 && ch.joining.size === 0)) return;
    ch.filling = true;
    try {
      for (;;) {
        const from = ch.published;
        const got = await this.readAfter(thread, from, FILL_PAGE);
        if (this.channels.get(thread) !== ch) return;
        for (const m of got) if (ch.published === undefined || m.seq > ch.published) ch.pending.set(m.seq, m);
        this.drain(thread, ch);
        if (got.length < FILL_PAGE) break;
      }
    } catch (err) {
      this.onError(err);
      this.armGap(thread, ch);
    } finally {
      ch.filling = false;
    }
  }

  private dropIfIdle(thread: bigint, ch: Channel): void {
    if (!ch.idle) return;
    clearTimeout(ch.gapTimer);
    this.channels.delete(thread);
  }
}
