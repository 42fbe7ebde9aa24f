// The realtime part of a node (svc.realtime): what nodes relay to each other's WebSocket connections besides the
// messages of streams. It composes one part per job, subscribes them to eight channels (runtime/engines/node-channels.ts:
// presence, typing, read, message.update, friend.request, friendship, moment, moment.counts) and hands them the
// sessions that join and leave:
//   - local-sessions.ts: this node's sessions by principal, where every relay finds the connections an event concerns;
//   - presence.ts: connections online and offline, and which friends each session watches (presence);
//   - friendship-relay.ts: a friendship made or ended changes what both sides' sessions watch (friendship);
//   - typing.ts: what a connection's typing frames do;
//   - addressed-relay.ts: events naming whom they are for, as frames to those sessions (typing, read,
//     message.update, friend.request);
//   - moment-relay.ts: moments published and their new counts, to the sessions that may see them (moment,
//     moment.counts);
//   - realtime-store.ts: what they read from Postgres.
// Everything they publish goes through the node's announcer (runtime/events/announcer.ts).
import type { Engines } from "../engines/engines.ts";
import type { Core } from "../services.ts";
import { AddressedRelay } from "./addressed-relay.ts";
import { FriendshipRelay } from "./friendship-relay.ts";
import { type LiveSession, LocalSessions } from "./local-sessions.ts";
import { MomentRelay } from "./moment-relay.ts";
import { Presence } from "./presence.ts";
import type { RealtimeStore } from "./realtime-store.ts";
import { Typing } from "./typing.ts";

/** What the realtime parts use of the node's core. */
export type RealtimeCore = Pick<Core, "log" | "now" | "announce"> & { engines: Pick<Engines, "pubsub" | "presence"> };

export class Realtime {
  private readonly sessions = new LocalSessions();
  private readonly presence: Presence;
  private readonly typingFrames: Typing;
  private readonly addressed: AddressedRelay;
  private readonly friendships: FriendshipRelay;
  /** Moments and their counts live. */
  readonly moments: MomentRelay;
  private readonly leaving = new Set<Promise<void>>();
  private unsubscribes: (() => Promise<void>)[] = [];

  constructor(svc: RealtimeCore, store: RealtimeStore) {
    this.presence = new Presence(svc, this.sessions, store);
    this.typingFrames = new Typing(svc, store);
    this.addressed = new AddressedRelay(svc, this.sessions);
    this.friendships = new FriendshipRelay(svc, this.sessions, store, this.presence);
    this.moments = new MomentRelay(svc, this.sessions, this.presence, store);
  }

  async start(): Promise<void> {
    this.unsubscribes = await Promise.all([
      this.presence.subscribe(),
      ...this.addressed.subscribe(),
      this.friendships.subscribe(),
      ...this.moments.subscribe(),
    ]);
    this.presence.startRefresh();
  }

  /**
   * An authenticated session: among the local sessions at once (a friendship change meanwhile waits for its join),
   * then marked online, watching its friends (then `watching` is called) and told which of them are online.
   */
  async join(s: LiveSession, watching: () => void = () => {}): Promise<void> {
    this.sessions.add(s);
    await this.presence.join(s, watching);
  }

  /** A session closed: stop its typing, drop it from the local sessions, and leave presence. */
  leave(s: LiveSession): Promise<void> {
    const p = (async () => {
      await s.joined;
      await this.typingFrames.leave(s);
      this.sessions.remove(s);
      await this.presence.leave(s);
    })().catch((err) => s.log.warn({ err }, "presence leave failed"));
    this.leaving.add(p);
    void p.finally(() => this.leaving.delete(p));
    return p;
  }

  /** Take one typing frame from the connection's budget; false (the socket answered and closed) on a flood. */
  admitTyping(s: LiveSession): boolean {
    return this.typingFrames.admit(s);
  }

  /** A typing start or stop from the session, in a thread its principal belongs to (404 otherwise). */
  typing(s: LiveSession, thread: bigint, state: "start" | "stop"): Promise<void> {
    return this.typingFrames.frame(s, thread, state);
  }

  /** Wait for closing sessions to leave, then drop the subscriptions. */
  async close(): Promise<void> {
    this.presence.stop();
    await Promise.allSettled([...this.leaving]);
    await Promise.allSettled(this.unsubscribes.map((u) => u()));
  }
}
