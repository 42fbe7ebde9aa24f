// Presence across nodes. Each connection is an entry in the presence engine, refreshed by its node every
// PRESENCE_REFRESH_MS and forgotten PRESENCE_TTL_MS after the last refresh (so a node that dies is forgotten); a
// principal's first connection is announced online and its last one offline (runtime/events/announcer.ts). Every
// node hands those events to its sessions watching that principal: a session watches its friends, read once at its
// join, and a friendship made or ended later changes what it watches (`rewatch`, from runtime/ws/friendship-relay.ts).
import { avatarPath } from "../../schema/avatar-path.ts";
import { authorOf } from "../auth.ts";
import { CHANNELS, listen } from "../engines/node-channels.ts";
import type { PresenceChanged } from "../events/announcer.ts";
import { addTo, removeFrom } from "../set-map.ts";
import type { Author } from "../../schema/common.ts";
import type { LiveSession, LocalSessions } from "./local-sessions.ts";
import type { RealtimeCore } from "./realtime.ts";
import type { RealtimeStore } from "./realtime-store.ts";

const PRESENCE_TTL_MS = 90_000;
const PRESENCE_REFRESH_MS = 30_000;

export class Presence {
  /** Principal -> the sessions here watching it. */
  private readonly watchers = new Map<string, Set<LiveSession>>();
  /** Session -> the principals it watches. */
  private readonly watching = new WeakMap<LiveSession, string[]>();
  /** Sessions whose presence connect has run (the periodic refresh keeps only these alive). */
  private readonly live = new WeakSet<LiveSession>();
  private refreshTimer: NodeJS.Timeout | undefined;

  constructor(
    private readonly svc: RealtimeCore,
    private readonly sessions: LocalSessions,
    private readonly store: RealtimeStore,
  ) {}

  /** Hear every node's presence events. Returns the unsubscribe function. */
  subscribe(): Promise<() => Promise<void>> {
    return listen(this.svc.engines.pubsub, CHANNELS.presence, this.svc.log, (e) => this.onPresence(e));
  }

  /** Refresh this node's connections every PRESENCE_REFRESH_MS, until `stop`. */
  startRefresh(): void {
    this.refreshTimer = setInterval(() => void this.refresh(), PRESENCE_REFRESH_MS);
    this.refreshTimer.unref();
  }

  stop(): void {
    clearInterval(this.refreshTimer);
  }

  /**
   * A session joining (already among the local sessions): mark it online, watch its friends, call `watching` (it
   * now hears every friend's change: it may tell its client it is ready), and tell it which friends are online.
   */
  async join(s: LiveSession, watching: () => void): Promise<void> {
    const me = s.principal!;
    const [cameOnline, friends] = await Promise.all([
      this.svc.engines.presence.connect(me.id, s.id, this.svc.now(), PRESENCE_TTL_MS).finally(() => this.live.add(s)),
      this.store.friendsOf(me.id),
    ]);
    const ids = friends.map((f) => f.id);
    if (!s.closed) {
      this.watching.set(s, ids);
      for (const id of ids) addTo(this.watchers, id, s);
    }
    watching();
    if (cameOnline) await this.svc.announce.presence({ ...authorOf(me), status: "online" });
    if (s.closed) return;
    const online = await this.svc.engines.presence.online(ids, this.svc.now());
    for (const f of friends) {
      if (online.has(f.id))
        s.send({
          type: "presence",
          principal: { id: f.id, display_name: f.display_name, avatar_url: avatarPath(f.avatar_key) },
          status: "online",
        });
    }
  }

  /** A session gone from the local sessions: forget its watches, and announce offline if it was the last one. */
  async leave(s: LiveSession): Promise<void> {
    const me = s.principal!;
    for (const id of this.watching.get(s) ?? []) removeFrom(this.watchers, id, s);
    const wentOffline = await this.svc.engines.presence.disconnect(me.id, s.id, this.svc.now());
    if (wentOffline) await this.svc.announce.presence({ ...authorOf(me), status: "offline" });
  }

  /**
   * Start or stop watching `friend` for a connected session: the session is told of the friendship (a `friendship`
   * frame) when it changes what the session watches, a new friend already online is announced, an ex-friend who was
   * watched is announced offline (the client shows no presence for a non-friend).
   */
  async rewatch(s: LiveSession, friend: Author, add: boolean): Promise<void> {
    const list = this.watching.get(s);
    if (s.closed || !list) return;
    const at = list.indexOf(friend.id);
    if (!add) {
      if (at < 0) return;
      list.splice(at, 1);
      removeFrom(this.watchers, friend.id, s);
      s.send({ type: "friendship", friend, status: "ended" });
      s.send({ type: "presence", principal: friend, status: "offline" });
      return;
    }
    if (at >= 0) return;
    list.push(friend.id);
    addTo(this.watchers, friend.id, s);
    s.send({ type: "friendship", friend, status: "made" });
    try {
      const online = await this.svc.engines.presence.online([friend.id], this.svc.now());
      // still a watched friend after the wait (not ended meanwhile)
      if (online.has(friend.id) && !s.closed && this.watching.get(s)?.includes(friend.id)) {
        s.send({ type: "presence", principal: friend, status: "online" });
      }
    } catch (err) {
      s.log.warn({ err }, "presence of a new friend not read");
    }
  }

  /** The sessions here watching `principal`: its friends' (a friend is never blocked: a block ends the friendship). */
  watchersOf(principal: string): ReadonlySet<LiveSession> {
    return this.watchers.get(principal) ?? new Set();
  }

  private onPresence(e: PresenceChanged): void {
    for (const s of this.watchers.get(e.id) ?? []) {
      s.send({
        type: "presence",
        principal: { id: e.id, display_name: e.display_name, avatar_url: e.avatar_url },
        status: e.status,
      });
    }
  }

  /** Keep this node's connections alive in the presence engine. */
  private async refresh(): Promise<void> {
    // Only sessions whose own connect has run: refreshing one still joining would record its connection
    // first, and its connect would then not see the principal come online (no "online" event at all).
    const conns = this.sessions
      .all()
      .flatMap((s) => (s.principal && this.live.has(s) ? [{ principal: s.principal.id, connId: s.id }] : []));
    await this.svc.engines.presence.refresh(conns, this.svc.now(), PRESENCE_TTL_MS).catch((err) => {
      this.svc.log.warn({ err }, "presence refresh failed");
    });
  }
}
