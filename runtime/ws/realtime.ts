// Presence and typing across nodes. Each node subscribes once to three channels ("presence", "typing",
// "friendship"); events carry who they concern and each node hands them to its own sessions through in-process
// maps: sessions by principal (typing goes to a thread's members) and sessions by watched friend (presence). A
// friendship made or ended while connected changes what the connections of both sides watch.
// Presence entries expire unless refreshed, so a node that dies is forgotten after PRESENCE_TTL_MS.
import { avatarPath } from "../accounts/avatar-path.ts";
import { authorOf } from "../auth.ts";
import { PREFIX } from "../ids.ts";
import { CHANNELS, type ChannelMessage, listen, publish } from "../engines/node-channels.ts";
import { addTo, removeFrom } from "../set-map.ts";
import { pairKey } from "../messaging/store.ts";
import { notFound } from "../errors.ts";
import type { Core, Services } from "../services.ts";
import type { Author } from "../../schema/common.ts";
import type { Message } from "../../schema/messages.ts";
import { type ServerFrame, WS_CLOSE } from "../../schema/ws.ts";
import type { WsSession } from "./session.ts";
import { StartGate, TYPING_BURST, TYPING_PER_SECOND, TypingBudget } from "./typing-limits.ts";

const PRESENCE_TTL_MS = 90_000;
const PRESENCE_REFRESH_MS = 30_000;
/** A typing start lapses after this many seconds unless repeated. */
const TYPING_TTL_SECONDS = 10;
const MEMBERS_CACHE_MS = 5_000;

type PresenceEvent = ChannelMessage<typeof CHANNELS.presence>;

/**
 * The friendship of two principals was made or ended (published after the commit). It says only which pair
 * changed: a node with connections of either side reads what the pair is now, names included.
 */
type FriendshipEvent = ChannelMessage<typeof CHANNELS.friendship>;

/** A pair as it is now: friends or not, and each one's name and picture key. */
interface FriendshipNow {
  friends: boolean;
  a_name: string;
  a_avatar: string | null;
  b_name: string;
  b_avatar: string | null;
}

/** Tell every node's connections of both sides about a friendship that was made or ended. */
export function announceFriendship(svc: Services, e: FriendshipEvent): Promise<void> {
  return publish(svc.engines.pubsub, CHANNELS.friendship, e);
}

type TypingEventMsg = ChannelMessage<typeof CHANNELS.typing>;

/** A principal marked a thread read: the connections of `to` on every node hear it (published after the commit). */
type ReadEventMsg = ChannelMessage<typeof CHANNELS.read>;

export function announceRead(svc: Services, e: ReadEventMsg): Promise<void> {
  return publish(svc.engines.pubsub, CHANNELS.read, e);
}

type FriendRequestMsg = ChannelMessage<typeof CHANNELS.friendRequest>;

/** A friend request was made (after its commit): the recipient's connections on every node hear it. */
export function announceFriendRequest(svc: Services, e: FriendRequestMsg): Promise<void> {
  return publish(svc.engines.pubsub, CHANNELS.friendRequest, e);
}

export class Realtime {
  private readonly sessions = new Map<string, Set<WsSession>>();
  private readonly watchers = new Map<string, Set<WsSession>>();
  private readonly watching = new WeakMap<WsSession, string[]>();
  private readonly members = new Map<bigint, { ids: string[]; at: number }>();
  private readonly leaving = new Set<Promise<void>>();
  /** Friendship changes being read, per pair: the newest one's number (an older one is not applied). */
  private readonly pairs = new Map<string, number>();
  private pairSeq = 0;
  private unsubscribes: (() => Promise<void>)[] = [];
  /** Sessions whose presence connect has run (the periodic refresh keeps only these alive). */
  private readonly live = new WeakSet<WsSession>();
  private refreshTimer: NodeJS.Timeout | undefined;
  /** Typing starts gone out, per principal and thread; each connection's budget of typing frames. */
  private readonly starts = new StartGate();
  private readonly budgets = new WeakMap<WsSession, TypingBudget>();

  constructor(private readonly svc: Core) {}

  async start(): Promise<void> {
    const ps = this.svc.engines.pubsub;
    this.unsubscribes = await Promise.all([
      listen(ps, CHANNELS.presence, this.svc.log, (e) => this.onPresence(e)),
      listen(ps, CHANNELS.typing, this.svc.log, (e) => this.onTyping(e)),
      listen(ps, CHANNELS.read, this.svc.log, (e) => this.onRead(e)),
      listen(ps, CHANNELS.messageUpdate, this.svc.log, (e) => this.onMessageUpdate(e)),
      listen(ps, CHANNELS.friendRequest, this.svc.log, (e) => {
        for (const s of this.sessions.get(e.to) ?? [])
          s.send({ type: "friend_request", request: e.request, from: e.from });
      }),
      listen(ps, CHANNELS.friendship, this.svc.log, (e) => void this.onFriendship(e)),
    ]);
    this.refreshTimer = setInterval(() => void this.refresh(), PRESENCE_REFRESH_MS);
    this.refreshTimer.unref();
  }

  /** Every open session on this node. */
  all(): WsSession[] {
    return [...this.sessions.values()].flatMap((s) => [...s]);
  }

  /** An authenticated session: mark it online, watch its friends and tell it which of them are online. */
  async join(s: WsSession, watching: () => void = () => {}): Promise<void> {
    const me = s.principal!;
    addTo(this.sessions, me.id, s);
    const now = this.svc.now();
    const [cameOnline, friends] = await Promise.all([
      this.svc.engines.presence.connect(me.id, s.id, now, PRESENCE_TTL_MS).finally(() => this.live.add(s)),
      this.svc.sql<{ id: string; display_name: string; avatar_key: string | null }[]>`
        select f.friend as id, p.display_name, p.avatar_key from friendships f join principals p on p.id = f.friend
        where f.principal = ${me.id}`,
    ]);
    const ids = friends.map((f) => f.id);
    if (!s.closed) {
      this.watching.set(s, ids);
      for (const id of ids) addTo(this.watchers, id, s);
    }
    watching(); // the session now hears every friend's change: it may tell its client it is ready
    if (cameOnline) await this.publishPresence({ ...authorOf(me), status: "online" });
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

  /** A session closed: stop its typing, forget its watches, and announce offline if it was the last one. */
  leave(s: WsSession): Promise<void> {
    const p = (async () => {
      await s.joined;
      const me = s.principal!;
      for (const [thread, t] of s.typing) {
        clearTimeout(t.timer);
        await this.publishTyping(s, thread, "stop", t.members).catch(() => {});
      }
      s.typing.clear();
      removeFrom(this.sessions, me.id, s);
      for (const id of this.watching.get(s) ?? []) removeFrom(this.watchers, id, s);
      const wentOffline = await this.svc.engines.presence.disconnect(me.id, s.id, this.svc.now());
      if (wentOffline) await this.publishPresence({ ...authorOf(me), status: "offline" });
    })().catch((err) => s.log.warn({ err }, "presence leave failed"));
    this.leaving.add(p);
    void p.finally(() => this.leaving.delete(p));
    return p;
  }

  /**
   * Take one typing frame from the connection's budget (runtime/ws/typing-limits.ts). A flood gets an error frame,
   * then the socket is closed with WS_CLOSE.typingFlood, and false.
   */
  admitTyping(s: WsSession): boolean {
    const now = this.svc.now();
    let budget = this.budgets.get(s);
    if (!budget) {
      budget = new TypingBudget(now);
      this.budgets.set(s, budget);
    }
    if (budget.take(now)) return true;
    s.sendError(
      "rate_limited",
      `typing frames faster than ${TYPING_BURST} at once and ${TYPING_PER_SECOND} a second: closing the connection`,
    );
    s.end(WS_CLOSE.typingFlood, "typing flood");
    return false;
  }

  /**
   * Typing start/stop in a thread the session's principal belongs to (404 otherwise). A start goes out at most
   * every TYPING_REPEAT_MS per principal and thread (a repeat meanwhile only keeps this connection's start from
   * lapsing); a stop goes out only after a start of this connection did, once.
   */
  async typing(s: WsSession, thread: bigint, state: "start" | "stop"): Promise<void> {
    const now = this.svc.now();
    const me = s.principal!;
    const members = await this.membersOf(thread, now);
    if (!members.includes(me.id)) throw notFound("thread");
    if (s.closed) return;
    const key = PREFIX.thread + thread.toString();
    const cur = s.typing.get(key);
    if (state === "stop") {
      if (!cur) return;
      clearTimeout(cur.timer);
      s.typing.delete(key);
      await this.publishTyping(s, key, "stop", members);
      return;
    }
    const publish = this.starts.pass(me.id, key, now);
    if (!publish && !cur) return;
    if (cur) clearTimeout(cur.timer);
    const timer = setTimeout(() => {
      s.typing.delete(key);
      void this.publishTyping(s, key, "stop", members).catch(() => {});
    }, TYPING_TTL_SECONDS * 1000);
    timer.unref();
    s.typing.set(key, { timer, members });
    if (publish) await this.publishTyping(s, key, "start", members);
  }

  private async membersOf(thread: bigint, now: number): Promise<string[]> {
    const hit = this.members.get(thread);
    if (hit && now - hit.at < MEMBERS_CACHE_MS) return hit.ids;
    const rows = await this.svc.sql<
      { principal: string }[]
    >`select principal from thread_members where thread_id = ${String(thread)}`;
    const ids = rows.map((r) => r.principal);
    if (this.members.size > 10_000) this.members.clear();
    this.members.set(thread, { ids, at: now });
    return ids;
  }

  private publishTyping(s: WsSession, thread: string, state: "start" | "stop", members: string[]): Promise<void> {
    const me = s.principal!;
    const msg: TypingEventMsg = {
      thread,
      from: authorOf(me),
      state,
      to: members.filter((m) => m !== me.id),
    };
    return publish(this.svc.engines.pubsub, CHANNELS.typing, msg);
  }

  private publishPresence(e: PresenceEvent): Promise<void> {
    return publish(this.svc.engines.pubsub, CHANNELS.presence, e);
  }

  private onTyping(e: TypingEventMsg): void {
    for (const id of e.to) {
      for (const s of this.sessions.get(id) ?? []) {
        s.send({
          type: "typing",
          thread_id: e.thread,
          from: e.from,
          state: e.state,
          ...(e.state === "start" ? { expires_in: TYPING_TTL_SECONDS } : {}),
        });
      }
    }
  }

  /** A message was edited or deleted: the members' connections get it as it is now, to replace what they show. */
  private onMessageUpdate(e: ChannelMessage<typeof CHANNELS.messageUpdate>): void {
    let frame: ServerFrame | undefined;
    for (const id of e.to) {
      const sessions = this.sessions.get(id);
      if (!sessions?.size) continue;
      frame ??= { type: "message_update", message: JSON.parse(e.payload) as Message };
      for (const s of sessions) s.send(frame);
    }
  }

  private onRead(e: ReadEventMsg): void {
    for (const id of e.to) {
      for (const s of this.sessions.get(id) ?? [])
        s.send({ type: "read", thread_id: e.thread, from: e.from, through: e.through });
    }
  }

  private onPresence(e: PresenceEvent): void {
    for (const s of this.watchers.get(e.id) ?? []) {
      s.send({
        type: "presence",
        principal: { id: e.id, display_name: e.display_name, avatar_url: e.avatar_url },
        status: e.status,
      });
    }
  }

  /**
   * The friendship of two principals changed. What it is now is read from Postgres (not taken from the event: a
   * change made on another node may be announced before an earlier one), once per event on a node that holds a
   * session of either side, and applied only if no later event for the pair came meanwhile.
   */
  private async onFriendship(e: FriendshipEvent): Promise<void> {
    if (!this.sessions.has(e.a) && !this.sessions.has(e.b)) return;
    const key = pairKey(e.a, e.b);
    const seq = ++this.pairSeq;
    this.pairs.set(key, seq);
    let now: FriendshipNow | undefined;
    try {
      // a deleted account has no name left: its friends are told it is offline under an empty one
      [now] = await this.svc.sql<FriendshipNow[]>`
        select exists (select 1 from friendships where principal = ${e.a} and friend = ${e.b}) as friends,
               coalesce(pa.display_name, '') as a_name, pa.avatar_key as a_avatar,
               coalesce(pb.display_name, '') as b_name, pb.avatar_key as b_avatar
        from (select 1) one
        left join principals pa on pa.id = ${e.a}
        left join principals pb on pb.id = ${e.b}`;
    } catch (err) {
      if (this.pairs.get(key) === seq) this.pairs.delete(key);
      this.svc.log.warn({ err }, "friendship change not applied to connections");
      return;
    }
    if (this.pairs.get(key) !== seq || !now) return; // a later change of this pair came meanwhile: it applies
    this.pairs.delete(key);
    const a = { id: e.a, display_name: now.a_name, avatar_url: avatarPath(now.a_avatar) };
    const b = { id: e.b, display_name: now.b_name, avatar_url: avatarPath(now.b_avatar) };
    for (const [me, friend] of [
      [a, b],
      [b, a],
    ] as const) {
      // a session still joining gets the change once its join (its own friends query among it) is done
      for (const s of this.sessions.get(me.id) ?? []) void s.joined.then(() => this.rewatch(s, friend, now.friends));
    }
  }

  /**
   * Start or stop watching `friend` for a connected session: a new friend already online is announced, an ex-friend
   * who was watched is announced offline (the client shows no presence for a non-friend).
   */
  private async rewatch(s: WsSession, friend: Author, add: boolean): Promise<void> {
    const list = this.watching.get(s);
    if (s.closed || !list) return;
    const at = list.indexOf(friend.id);
    if (!add) {
      if (at < 0) return;
      list.splice(at, 1);
      removeFrom(this.watchers, friend.id, s);
      s.send({ type: "presence", principal: friend, status: "offline" });
      return;
    }
    if (at >= 0) return;
    list.push(friend.id);
    addTo(this.watchers, friend.id, s);
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

  /** Keep this node's connections alive in the presence store. */
  private async refresh(): Promise<void> {
    // Only sessions whose own connect has run: refreshing one still joining would record its connection
    // first, and its connect would then not see the principal come online (no "online" event at all).
    const conns = this.all().flatMap((s) =>
      s.principal && this.live.has(s) ? [{ principal: s.principal.id, connId: s.id }] : [],
    );
    await this.svc.engines.presence.refresh(conns, this.svc.now(), PRESENCE_TTL_MS).catch((err) => {
      this.svc.log.warn({ err }, "presence refresh failed");
    });
  }

  /** Wait for closing sessions to leave, then drop the subscriptions. */
  async close(): Promise<void> {
    clearInterval(this.refreshTimer);
    await Promise.allSettled([...this.leaving]);
    await Promise.allSettled(this.unsubscribes.map((u) => u()));
  }
}
