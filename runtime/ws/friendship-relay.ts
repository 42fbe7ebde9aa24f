// Friendships made or ended while connected (accept, a request crossing one the other side sent, unfriend, an
// account's deletion), heard from every node: the sessions here of either side start or stop watching the other's
// presence (runtime/ws/presence.ts). The event names only the pair; what the pair is now is read from Postgres, since
// a change made on another node may be announced before an earlier one.
import { avatarPath } from "../../schema/avatar-path.ts";
import { CHANNELS, listen } from "../engines/node-channels.ts";
import type { FriendshipChanged } from "../events/announcer.ts";
import { pairKey } from "../messaging/direct-threads-store.ts";
import type { LocalSessions } from "./local-sessions.ts";
import type { Presence } from "./presence.ts";
import type { RealtimeCore } from "./realtime.ts";
import type { PairNow, RealtimeStore } from "./realtime-store.ts";

export class FriendshipRelay {
  /** Friendship changes being read, per pair: the newest one's number (an older one is not applied). */
  private readonly pairs = new Map<string, number>();
  private pairSeq = 0;

  constructor(
    private readonly svc: Pick<RealtimeCore, "engines" | "log">,
    private readonly sessions: LocalSessions,
    private readonly store: RealtimeStore,
    private readonly presence: Presence,
  ) {}

  /** Hear every node's friendship events. Returns the unsubscribe function. */
  subscribe(): Promise<() => Promise<void>> {
    return listen(this.svc.engines.pubsub, CHANNELS.friendship, this.svc.log, (e) => void this.onFriendship(e));
  }

  /**
   * What the pair is now is read once per event on a node that holds a session of either side, and applied only if
   * no later event for the pair came meanwhile.
   */
  private async onFriendship(e: FriendshipChanged): Promise<void> {
    if (!this.sessions.has(e.a) && !this.sessions.has(e.b)) return;
    const key = pairKey(e.a, e.b);
    const seq = ++this.pairSeq;
    this.pairs.set(key, seq);
    let now: PairNow;
    try {
      now = await this.store.pair(e.a, e.b);
    } catch (err) {
      if (this.pairs.get(key) === seq) this.pairs.delete(key);
      this.svc.log.warn({ err }, "friendship change not applied to connections");
      return;
    }
    if (this.pairs.get(key) !== seq) return; // a later change of this pair came meanwhile: it applies
    this.pairs.delete(key);
    const a = { id: e.a, display_name: now.a_name, avatar_url: avatarPath(now.a_avatar) };
    const b = { id: e.b, display_name: now.b_name, avatar_url: avatarPath(now.b_avatar) };
    for (const [me, friend] of [
      [a, b],
      [b, a],
    ] as const) {
      // a session still joining gets the change once its join (its own friends query among it) is done
      for (const s of this.sessions.of(me.id)) void s.joined.then(() => this.presence.rewatch(s, friend, now.friends));
    }
  }
}
