// Live delivery on one node: for each stream (an inbox or a group) some of this node's sockets take live, the messages
// committed to it are published, in the order of their numbers, as one frame per encoding to a uWS topic those
// sockets are subscribed to (the per-socket writes happen in uWS's C++, not once per member in JavaScript). A socket
// first catches up from Postgres past its cursor, then subscribes without a hole (`join`), so what it receives of a
// stream is contiguous from its cursor: that is what makes a cumulative ack safe (docs/ARCHITECTURE.md, "Messages").
import type { Count } from "../metrics.ts";
import type { Codec, Encoded } from "../ws/codec.ts";
import { isGroupStream, type StreamId } from "./stream-id.ts";
import { isHidden } from "./hidden.ts";
import type { Published } from "./stream-store.ts";

/** What publishes a frame to every socket subscribed to a topic (the uWS app; a fake in unit tests). */
interface TopicPublisher {
  publish(topic: string, data: Uint8Array | string, binary: boolean): void;
}

/** A socket taking streams live (a WebSocket session). */
export interface ChannelReader {
  readonly codec: Codec;
  subscribe(topic: string): void;
  unsubscribe(topic: string): void;
  /** Write one frame to this socket alone (catching up from the recent frames); false when the socket is gone. */
  write(frame: Encoded): boolean;
  /**
   * Whose group messages this socket's principal does not take (those it blocked: runtime/messaging/hidden.ts); empty
   * or absent, it takes every message from its streams' topics. With any, it takes its groups by writes of its own,
   * each message checked, and those passed over are `passOver`'s to acknowledge.
   */
  hidden?(): ReadonlySet<string>;
  passOver?(id: string): void;
}

/** Whether `reader` takes `key` by writes of its own (a group, and its principal blocked someone). */
const filters = (key: StreamId, reader: ChannelReader) => isGroupStream(key) && (reader.hidden?.().size ?? 0) > 0;

/** Write message `m` to a reader that filters; false when the socket is gone. */
function writeFiltered(key: StreamId, reader: ChannelReader, m: Published, frame: () => Encoded): boolean {
  if (isHidden(key, m.payload, reader.hidden!())) {
    reader.passOver?.(m.id);
    return true;
  }
  return reader.write(frame());
}

/** Reads a stream's messages after a number from Postgres (runtime/messaging/stream-store.ts). */
type ReadAfter = (stream: StreamId, after: number, limit: number) => Promise<Published[]>;

/** Recent messages kept per stream, for a socket that subscribes a little behind the node. */
const RING = 256;
/** A gap (a number not seen while a later one was) is filled from Postgres after this long. */
const GAP_MS = 250;
const FILL_PAGE = 100;

/** The uWS topic of a stream's frames in one encoding. */
export const topicOf = (stream: StreamId, codec: Codec) => `${stream}:${codec.name}`;

/**
 * One message's frame per encoding at one delivery count, built once for every connection it goes to: a group send
 * to a thousand members on this node encodes it once, not a thousand times. A JSON frame is kept as UTF-8 bytes, so
 * the socket writes do not convert the text again each time.
 */
class SharedFrames {
  private readonly byCodec = new Map<string, Encoded>();

  constructor(
    private readonly payload: string,
    private readonly deliveryCount: number,
  ) {}

  for(codec: Codec): Encoded {
    let e = this.byCodec.get(codec.name);
    if (e === undefined) {
      const made = codec.encodeMessage(this.payload, this.deliveryCount);
      e = typeof made.data === "string" ? { data: Buffer.from(made.data), binary: made.binary } : made;
      this.byCodec.set(codec.name, e);
    }
    return e;
  }
}

/**
 * The frames of the messages delivered lately, by message id and delivery count, so that every socket a message goes
 * to (published to a topic, or written in a catch-up) shares one frame, not a splice, a text and its UTF-8 copy each. A
 * message's payload is the same for each of its recipients, so its frame at a given count is too. Holds the last
 * `max` messages (the oldest go first); a frame not held is simply made again.
 */
export class RecentFrames {
  private readonly byKey = new Map<string, SharedFrames>();

  constructor(private readonly max = 128) {}

  /** A message changed (edited or deleted): its frames held are stale, at every delivery count. */
  forget(id: string): void {
    for (const key of [...this.byKey.keys()]) if (key === id || key.startsWith(`${id}#`)) this.byKey.delete(key);
  }

  /** The frames of message `id` at `deliveryCount`, made from `payload` when not held. */
  of(id: string, deliveryCount: number, payload: string): SharedFrames {
    const key = deliveryCount === 1 ? id : `${id}#${deliveryCount}`;
    let f = this.byKey.get(key);
    if (f === undefined) {
      f = new SharedFrames(payload, deliveryCount);
      if (this.byKey.size >= this.max) this.byKey.delete(this.byKey.keys().next().value!);
      this.byKey.set(key, f);
    }
    return f;
  }
}

class Channel {
  /** The last number published on this node; undefined until the first socket has caught up. */
  published: number | undefined;
  /** Messages that came ahead of a gap, by number. */
  readonly pending = new Map<number, Published>();
  /** The last RING messages published, in order. */
  readonly ring: Published[] = [];
  readonly readers = new Set<ChannelReader>();
  /** Those of `readers` that take the stream by writes of their own, not its topic (ChannelReader.hidden). */
  readonly filtered = new Set<ChannelReader>();
  /** Sockets to subscribe once `published` reaches their number (they caught up further than this node had). */
  readonly joining = new Map<ChannelReader, number>();
  /** Sockets catching up from Postgres (the channel collects what comes meanwhile). */
  warming = 0;
  gapTimer: NodeJS.Timeout | undefined;
  filling = false;

  get idle(): boolean {
    return this.readers.size === 0 && this.joining.size === 0 && this.warming === 0;
  }
}

export class Channels {
  private readonly channels = new Map<StreamId, Channel>();
  private publisher: TopicPublisher | undefined;
  private closed = false;

  constructor(
    private readonly frames: RecentFrames,
    private readonly readAfter: ReadAfter,
    private readonly onError: (err: unknown) => void,
    /** flock_messages_delivered_total{transport="websocket"}: a frame written to each socket (runtime/metrics.ts). */
    private readonly delivered: Count = { inc: () => {} },
  ) {}

  /** The uWS app, once the WebSocket route is mounted. */
  attach(publisher: TopicPublisher): void {
    this.publisher = publisher;
  }

  /** Streams with sockets on this node (tests). */
  get size(): number {
    return this.channels.size;
  }

  /** The last number this node published to a stream, if it has sockets taking it. */
  published(key: StreamId): number | undefined {
    return this.channels.get(key)?.published;
  }

  /**
   * A message of `key` was committed (from this node's send, or another's, by pub/sub): publish it in order. Answers
   * how many of this node's sockets take the stream, subscribed or catching up (0 when none, or when it had been
   * published already).
   */
  offer(m: Published): number {
    const key = m.key;
    const ch = this.channels.get(key);
    if (ch === undefined) return 0;
    if (ch.published !== undefined && m.seq <= ch.published) return 0;
    ch.pending.set(m.seq, m);
    this.drain(key, ch);
    return ch.readers.size + ch.joining.size + ch.warming;
  }

  /**
   * Message `id` of `key` changed (edited or deleted): what this node holds of it (its ring, a message waiting behind
   * a gap) carries `payload` from now on. A socket joining later from the ring gets it as it is now.
   */
  replace(key: StreamId, id: string, payload: string): void {
    const ch = this.channels.get(key);
    if (ch === undefined) return;
    const swap = (m: Published) => (m.id === id ? { ...m, payload } : m);
    for (let i = 0; i < ch.ring.length; i++) ch.ring[i] = swap(ch.ring[i]!);
    for (const [seq, m] of ch.pending) if (m.id === id) ch.pending.set(seq, swap(m));
  }

  /** A socket starts catching up on `key` from Postgres: the channel collects what is committed meanwhile. */
  warm(key: StreamId): void {
    this.channel(key).warming++;
  }

  /**
   * A socket that called `warm` caught up to `upTo` (the last number it wrote): subscribe it so that it gets every
   * message after that number exactly once. False when this node is further on than its recent messages reach back:
   * read Postgres past `upTo` again (the socket is still warming) and call again.
   */
  join(key: StreamId, reader: ChannelReader, upTo: number): boolean {
    const ch = this.channel(key);
    if (ch.published === undefined) {
      ch.published = upTo;
      for (const seq of ch.pending.keys()) if (seq <= upTo) ch.pending.delete(seq);
      ch.warming--;
      this.subscribe(key, ch, reader);
      this.drain(key, ch);
      return true;
    }
    if (ch.published >= upTo) {
      const from = ch.ring.findIndex((m) => m.seq === upTo + 1);
      if (ch.published > upTo && from < 0) return false;
      ch.warming--;
      if (ch.published > upTo) {
        for (const m of ch.ring.slice(from)) {
          const frame = () => this.frames.of(m.id, 1, m.payload).for(reader.codec);
          if (!(filters(key, reader) ? writeFiltered(key, reader, m, frame) : reader.write(frame()))) break;
          this.delivered.inc();
        }
      }
      this.subscribe(key, ch, reader);
      return true;
    }
    ch.warming--;
    ch.joining.set(reader, upTo);
    this.armGap(key, ch);
    return true;
  }

  /** A socket stops catching up without joining (it closed, or its read failed). */
  cool(key: StreamId): void {
    const ch = this.channels.get(key);
    if (ch === undefined) return;
    ch.warming--;
    this.dropIfIdle(key, ch);
  }

  /** A socket leaves a stream (it closed, or left the group): the last number published to it, if it had joined. */
  leave(key: StreamId, reader: ChannelReader): number | undefined {
    const ch = this.channels.get(key);
    if (ch === undefined) return undefined;
    const was = ch.readers.delete(reader);
    ch.joining.delete(reader);
    if (was && !ch.filtered.delete(reader)) reader.unsubscribe(topicOf(key, reader.codec));
    const at = ch.published;
    this.dropIfIdle(key, ch);
    return was ? at : undefined;
  }

  /** Fill every open gap from Postgres now (the gap timers do this after GAP_MS; tests call it by hand). */
  async fillGaps(): Promise<void> {
    await Promise.all([...this.channels].map(([key, ch]) => this.fill(key, ch)));
  }

  /** The streams this node publishes to its sockets now (a socket has caught up on each). */
  *live(): IterableIterator<StreamId> {
    for (const [key, ch] of this.channels) if (ch.published !== undefined) yield key;
  }

  /**
   * Read `key` past the last number published, though no gap was seen: the position check found the stream further
   * on in Postgres (a message whose publish never came, and nothing after it to show the gap).
   */
  async catchUp(key: StreamId): Promise<void> {
    const ch = this.channels.get(key);
    if (ch !== undefined) await this.fill(key, ch, true);
  }

  close(): void {
    this.closed = true;
    for (const ch of this.channels.values()) clearTimeout(ch.gapTimer);
    this.channels.clear();
  }

  private channel(key: StreamId): Channel {
    let ch = this.channels.get(key);
    if (ch === undefined) {
      ch = new Channel();
      this.channels.set(key, ch);
    }
    return ch;
  }

  /**
   * `reader`'s principal blocked or unblocked someone: each group it takes live moves to writes of its own (it now
   * hides someone's messages) or back to its topic (it hides none).
   */
  refilter(reader: ChannelReader): void {
    for (const [key, ch] of this.channels) {
      if (!ch.readers.has(reader) || !isGroupStream(key)) continue;
      const should = filters(key, reader);
      if (should === ch.filtered.has(reader)) continue;
      if (should) {
        reader.unsubscribe(topicOf(key, reader.codec));
        ch.filtered.add(reader);
      } else {
        ch.filtered.delete(reader);
        reader.subscribe(topicOf(key, reader.codec));
      }
    }
  }

  private subscribe(key: StreamId, ch: Channel, reader: ChannelReader): void {
    ch.readers.add(reader);
    if (filters(key, reader)) {
      ch.filtered.add(reader);
      return;
    }
    reader.subscribe(topicOf(key, reader.codec));
  }

  /** Publish what is next in order; a gap left behind arms its timer. */
  private drain(key: StreamId, ch: Channel): void {
    if (ch.published === undefined) return;
    for (;;) {
      const next = ch.pending.get(ch.published + 1);
      if (next === undefined) break;
      ch.pending.delete(next.seq);
      this.emit(key, ch, next);
    }
    if (ch.pending.size > 0 || ch.joining.size > 0) this.armGap(key, ch);
    else {
      clearTimeout(ch.gapTimer);
      ch.gapTimer = undefined;
    }
  }

  private emit(key: StreamId, ch: Channel, m: Published): void {
    ch.published = m.seq;
    ch.ring.push(m);
    if (ch.ring.length > RING) ch.ring.shift();
    const shared = this.frames.of(m.id, 1, m.payload);
    const done = new Set<string>();
    for (const r of ch.filtered) writeFiltered(key, r, m, () => shared.for(r.codec));
    for (const r of ch.readers) {
      if (done.has(r.codec.name) || ch.filtered.has(r)) continue;
      done.add(r.codec.name);
      const f = shared.for(r.codec);
      this.publisher?.publish(topicOf(key, r.codec), f.data, f.binary);
    }
    // one frame to each socket subscribed (a publish per encoding reaches them all)
    if (this.publisher !== undefined && ch.readers.size > 0) this.delivered.inc(ch.readers.size);
    for (const [r, upTo] of ch.joining) {
      if (upTo !== m.seq) continue;
      ch.joining.delete(r);
      this.subscribe(key, ch, r);
    }
  }

  private armGap(key: StreamId, ch: Channel): void {
    if (ch.gapTimer !== undefined || this.closed) return;
    ch.gapTimer = setTimeout(() => {
      ch.gapTimer = undefined;
      void this.fill(key, ch);
    }, GAP_MS);
    ch.gapTimer.unref();
  }

  /**
   * Read past the last number published from Postgres, so a message whose wake-up never came is published too;
   * `behind`: though nothing waits behind a gap (the position check's).
   */
  private async fill(key: StreamId, ch: Channel, behind = false): Promise<void> {
    if (ch.filling || ch.published === undefined) return;
    if (!behind && ch.pending.size === 0 && ch.joining.size === 0) return;
    ch.filling = true;
    try {
      for (;;) {
        const from = ch.published;
        const got = await this.readAfter(key, from, FILL_PAGE);
        if (this.channels.get(key) !== ch) return;
        for (const m of got) if (ch.published === undefined || m.seq > ch.published) ch.pending.set(m.seq, m);
        this.drain(key, ch);
        if (got.length < FILL_PAGE) break;
      }
    } catch (err) {
      this.onError(err);
      this.armGap(key, ch);
    } finally {
      ch.filling = false;
    }
  }

  private dropIfIdle(key: StreamId, ch: Channel): void {
    if (!ch.idle) return;
    clearTimeout(ch.gapTimer);
    this.channels.delete(key);
  }
}
