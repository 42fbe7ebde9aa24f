// A socket's streams (docs/ARCHITECTURE.md, "Messages"): each stream its principal takes (its inbox, its groups) is
// caught up past the member's cursor, page by page while the socket keeps up, then taken live from the stream's topic
// from the last number written (Channels.join), so everything after it comes once, in order. A group the principal
// leaves stops; when the socket closes, where each live stream stopped is marked (HandOuts.mark). A WebSocket session
// has one (runtime/ws/session.ts).
import type { ServerFrame } from "../../schema/ws.ts";
import type { Logger } from "../log.ts";
import type { Metrics } from "../metrics.ts";
import type { ChannelReader, RecentFrames } from "./channels.ts";
import type { StreamMember } from "./memberships.ts";
import type { StreamDelivery } from "./streams.ts";
import { groupOf, inboxStream, isGroupStream, type StreamId } from "./stream-id.ts";
import { isHidden } from "./hidden.ts";

const RETRY_MS = 1000;
/** Messages a catch-up reads and writes at a time. */
const PAGE = 100;

/** The socket a catch-up writes to (a WebSocket session). */
export interface StreamSocket extends ChannelReader {
  readonly closed: boolean;
  /** Its logger (naming its principal once it has one). */
  readonly log: Logger;
  /** Resolves once its outgoing buffer has room (at once when it has, or when it closes). */
  drained(): Promise<void>;
  /** Runs `cb`'s writes as one (uWS cork). */
  cork(cb: () => void): void;
  send(frame: ServerFrame): boolean;
  /** Read again whose group messages its principal does not take (ChannelReader.hidden), after a block changed. */
  reloadHidden?(): Promise<void>;
}

/** Where a socket is with one of its principal's streams: catching up from Postgres, or taking it live. */
interface StreamState {
  live: boolean;
}

export class SocketStreams implements StreamMember {
  /** The principal's streams this socket catches up on or takes live (subscribed to their topics). */
  private readonly held = new Map<StreamId, StreamState>();
  private principal: string | undefined;
  private removeMember: (() => void) | undefined;

  constructor(
    private readonly socket: StreamSocket,
    private readonly streams: StreamDelivery,
    private readonly frames: RecentFrames,
    private readonly metrics: Pick<Metrics, "delivered" | "redelivered">,
  ) {}

  /** Take every stream of `principal`: its inbox at once, its groups once they are read. */
  start(principal: string): void {
    this.principal = principal;
    this.removeMember = this.streams.memberships.register(principal, this);
    this.streamJoined(inboxStream(principal));
    void this.startStreams(principal);
  }

  /** Take every stream of the principal live, each once caught up past its cursor (runtime/messaging/channels.ts). */
  private async startStreams(me: string): Promise<void> {
    try {
      for (const stream of await this.streams.memberships.streamsOf(me, false)) this.streamJoined(stream);
    } catch (err) {
      if (this.socket.closed) return;
      this.socket.log.warn({ err }, "groups not read; retrying shortly");
      setTimeout(() => void this.startStreams(me), RETRY_MS).unref();
    }
  }

  /** Take a stream live (the inbox at the start, a group the principal is in or joins): catch up, then subscribe. */
  streamJoined(stream: StreamId): void {
    if (this.socket.closed || this.principal === undefined || this.held.has(stream)) return;
    this.held.set(stream, { live: false });
    this.streams.channels.warm(stream);
    void this.catchUp(this.principal, stream);
  }

  heldStreams(): Iterable<StreamId> {
    return this.held.keys();
  }

  streamLeft(stream: StreamId): void {
    if (!isGroupStream(stream) || this.principal === undefined) return;
    const state = this.held.get(stream);
    this.held.delete(stream);
    if (state?.live) this.streams.channels.leave(stream, this.socket);
  }

  /**
   * Write what the principal has not acknowledged in a stream, page by page while the socket keeps up, then take the
   * stream live from the last number written (Channels.join): everything after it comes once, in order. Before that,
   * the member's delivered_seq is set to LIVE, so a node that dies with this socket leaves every message of the
   * stream counted as possibly delivered.
   */
  private async catchUp(me: string, key: StreamId): Promise<void> {
    const { channels, reads, handOuts } = this.streams;
    const socket = this.socket;
    // this catch-up's own state: a leave and a join again while it waits start another, and this one must stop
    const mine = this.held.get(key);
    const still = () => !socket.closed && mine !== undefined && this.held.get(key) === mine && !mine.live;
    let after = 0;
    let marked = false;
    try {
      for (;;) {
        for (;;) {
          await socket.drained();
          if (!still()) return channels.cool(key);
          const b = await reads.backlog(me, key, PAGE, after);
          if (!still()) return channels.cool(key);
          const last = b.last.get(key);
          if (last === undefined) {
            // no longer a member
            this.held.delete(key);
            return channels.cool(key);
          }
          const expired = b.cursors.get(key)?.expired ?? 0;
          // unacknowledged messages of this stream that went past retention: said once, before what follows them
          if (expired > 0) {
            const group = groupOf(key);
            socket.send({
              type: "expired",
              ...(group === undefined ? {} : { thread_id: String(group) }),
              count: expired,
            });
          }
          // (the read recorded what it hands out: a socket that dies before writing it errs on "possibly delivered")
          socket.cork(() => {
            const m = this.metrics;
            const hidden = socket.hidden?.();
            for (const e of b.entries) {
              // a group message of someone the principal blocked: passed over, and acknowledged for it (hidden.ts)
              if (hidden !== undefined && isHidden(key, e.payload, hidden)) {
                socket.passOver?.(e.id);
                continue;
              }
              if (!socket.write(this.frames.of(e.id, e.deliveryCount, e.payload).for(socket.codec))) return;
              m.delivered.websocket.inc();
              if (e.deliveryCount > 1) m.redelivered.websocket.inc();
            }
          });
          if (b.entries.length < PAGE) {
            after = Math.max(after, last);
            break;
          }
          after = b.entries.at(-1)!.seq;
        }
        if (!marked) {
          await handOuts.mark(me, key, null);
          marked = true;
          if (!still()) return channels.cool(key);
        }
        if (!still()) return channels.cool(key);
        if (channels.join(key, socket, after)) {
          mine!.live = true;
          // a write of the join (the recent messages it was behind by) may have closed the socket
          if (socket.closed || this.held.get(key) !== mine) channels.leave(key, socket);
          return;
        }
      }
    } catch (err) {
      channels.cool(key);
      if (!still()) return;
      this.held.delete(key);
      socket.log.warn({ err, stream: key }, "catch-up failed; retrying shortly");
      setTimeout(() => this.streamJoined(key), RETRY_MS).unref();
    }
  }

  /** The principal blocked or unblocked someone: the socket reads whom it hides, and its live groups follow. */
  relationsChanged(): void {
    const socket = this.socket;
    void socket
      .reloadHidden?.()
      .then(() => {
        if (!socket.closed) this.streams.channels.refilter(socket);
      })
      .catch((err: unknown) => socket.log.warn({ err }, "blocks not read again; the socket keeps what it had"));
  }

  /** The socket is gone: each stream taken live marks the last number published to it (a catch-up sees and stops). */
  stop(): void {
    this.removeMember?.();
    const me = this.principal;
    for (const [stream, state] of this.held) {
      if (!state.live || me === undefined) continue; // a catch-up under way sees the socket closed and stops
      const at = this.streams.channels.leave(stream, this.socket);
      if (at !== undefined) {
        this.streams.handOuts
          .mark(me, stream, at)
          .catch((err: unknown) => this.socket.log.warn({ err }, "delivery mark not written"));
      }
    }
    this.held.clear();
  }
}
