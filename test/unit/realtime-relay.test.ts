// The announcer and the realtime relays together (runtime/events/announcer.ts, runtime/ws/realtime.ts and its parts),
// on the memory engines, no server: two nodes share one pub/sub and one presence engine, each with its own relays,
// and what one announces reaches the sessions of the other as frames. Sessions are recording ones (the part of a
// session the relays use); what the relays read from Postgres comes from an in-memory RealtimeStore.
import t, { type Test } from "tap";
import { asFull, type Principal } from "../../runtime/auth.ts";
import { MemoryPresence } from "../../runtime/engines/memory/presence.ts";
import { MemoryPubSub } from "../../runtime/engines/memory/pubsub.ts";
import { CHANNELS, publish } from "../../runtime/engines/node-channels.ts";
import { NodeAnnouncer } from "../../runtime/events/announcer.ts";
import { createLogger } from "../../runtime/log.ts";
import type { LiveSession } from "../../runtime/ws/local-sessions.ts";
import { Realtime, type RealtimeCore } from "../../runtime/ws/realtime.ts";
import type { FriendRow, PairNow, RealtimeStore } from "../../runtime/ws/realtime-store.ts";
import { TYPING_REPEAT_MS } from "../../runtime/ws/typing-limits.ts";
import type { ServerFrame } from "../../schema/ws.ts";
import { until } from "../helpers/wait.ts";

/** Friendships, names and thread members, as the Postgres statements of realtime-store.ts read them. */
class MemoryRealtimeStore implements RealtimeStore {
  readonly names = new Map<string, string>();
  private readonly friends = new Set<string>();
  readonly members = new Map<bigint, string[]>();

  befriend(a: string, b: string, yes = true): void {
    for (const k of [`${a} ${b}`, `${b} ${a}`]) {
      if (yes) this.friends.add(k);
      else this.friends.delete(k);
    }
  }

  async friendsOf(me: string): Promise<FriendRow[]> {
    return [...this.friends]
      .map((k) => k.split(" ") as [string, string])
      .filter(([p]) => p === me)
      .map(([, f]) => ({ id: f, display_name: this.names.get(f) ?? "", avatar_key: null }));
  }

  async membersOf(thread: bigint): Promise<string[]> {
    return this.members.get(thread) ?? [];
  }

  /** Who muted whom ("muter muted"). */
  readonly mutes = new Set<string>();

  async audienceAmong(author: string, readers: string[]): Promise<string[]> {
    return readers.filter((r) => this.friends.has(`${r} ${author}`) && !this.mutes.has(`${r} ${author}`));
  }

  async pair(a: string, b: string): Promise<PairNow> {
    return {
      friends: this.friends.has(`${a} ${b}`),
      a_name: this.names.get(a) ?? "",
      a_avatar: null,
      b_name: this.names.get(b) ?? "",
      b_avatar: null,
    };
  }
}

/** A session that records what it is sent. */
interface Recorder extends LiveSession {
  frames: ServerFrame[];
  ended?: number;
}

let connIds = 0;
function session(p: Principal): Recorder {
  const s: Recorder = {
    id: `c${++connIds}`,
    principal: p,
    closed: false,
    joined: Promise.resolve(),
    typing: new Map(),
    log: createLogger("silent"),
    frames: [],
    send(frame) {
      s.frames.push(frame);
      return true;
    },
    sendError(error, message) {
      s.frames.push({ type: "error", error, message } as ServerFrame);
    },
    end(code) {
      s.ended = code;
    },
  };
  return s;
}

const principal = (id: string, name: string): Principal =>
  asFull({
    id,
    kind: "agent",
    displayName: name,
    avatarKey: null,
  });
const author = (p: Principal) => ({ id: p.id, display_name: p.displayName, avatar_url: null });
const ofType = <T extends ServerFrame["type"]>(s: Recorder, type: T) =>
  s.frames.filter((f): f is Extract<ServerFrame, { type: T }> => f.type === type);

/** Two nodes on one pub/sub and one presence engine, each with its announcer and its relays. */
async function cluster(t: Test) {
  const pubsub = new MemoryPubSub();
  const presence = new MemoryPresence();
  const store = new MemoryRealtimeStore();
  let clock = 1_000_000;
  const node = async () => {
    const core: RealtimeCore = {
      log: createLogger("silent"),
      now: () => clock,
      announce: new NodeAnnouncer(pubsub),
      engines: { pubsub, presence },
    };
    const realtime = new Realtime(core, store);
    await realtime.start();
    t.teardown(() => realtime.close());
    return { core, realtime };
  };
  return { pubsub, store, one: await node(), two: await node(), tick: (ms: number) => (clock += ms) };
}

const alice = principal("1", "alice");
const bob = principal("2", "bob");
const carol = principal("3", "carol");

t.test("what one node announces reaches the sessions it names on the other, as frames", async (t) => {
  const { pubsub, one, two } = await cluster(t);
  const [a, b, c] = [session(alice), session(bob), session(carol)];
  await one.realtime.join(a);
  await two.realtime.join(b);
  await two.realtime.join(c);

  await one.core.announce.read({ thread: "thread_9", from: author(alice), through: "msg_7", to: ["1", "2"] });
  await until(() => ofType(b, "read").length === 1, { what: "bob's read frame" });
  t.same(ofType(b, "read"), [{ type: "read", thread_id: "thread_9", from: author(alice), through: "msg_7" }]);
  t.equal(ofType(a, "read").length, 1, "alice's own connection on the first node hears it too");
  t.same(ofType(c, "read"), [], "carol, not named, hears nothing");

  const request = {
    id: "freq_5",
    from: "1",
    to: "3",
    status: "pending" as const,
    created_at: "2026-12-01T00:00:00.000Z",
  };
  await one.core.announce.friendRequest({ to: "3", request, from: author(alice) });
  await until(() => ofType(c, "friend_request").length === 1, { what: "carol's friend request" });
  t.same(ofType(c, "friend_request"), [{ type: "friend_request", request, from: author(alice) }]);
  t.same(ofType(b, "friend_request"), [], "only the recipient");

  // an edit as runtime/messaging/streams.ts publishes it: the members' connections get the message as it is now
  const message = { id: "msg_7", body: "edited" };
  await publish(pubsub, CHANNELS.messageUpdate, {
    origin: "n1",
    key: "g:9",
    id: "7",
    payload: JSON.stringify(message),
    to: ["2", "3"],
  });
  await until(() => ofType(c, "message_update").length === 1, { what: "carol's message update" });
  t.same(ofType(b, "message_update"), [{ type: "message_update", message }]);
  t.same(ofType(a, "message_update"), [], "alice is not a member");
});

t.test("the announcer publishes each event on its channel, in the channel's encoding", async (t) => {
  const pubsub = new MemoryPubSub();
  const announce = new NodeAnnouncer(pubsub);
  const heard: [string, string][] = [];
  for (const ch of ["presence", "typing", "read", "friend.request", "friendship"])
    await pubsub.subscribe(ch, (buf) => heard.push([ch, buf.toString()]));
  const events = {
    presence: { ...author(alice), status: "online" as const },
    typing: { thread: "thread_9", from: author(alice), state: "start" as const, to: ["2"] },
    read: { thread: "thread_9", from: author(alice), through: "msg_7", to: ["2"] },
    friendRequest: {
      to: "2",
      request: { id: "freq_5", from: "1", to: "2", status: "pending" as const, created_at: "2026-12-01T00:00:00Z" },
      from: author(alice),
    },
    friendship: { a: "1", b: "2" },
  };
  await announce.presence(events.presence);
  await announce.typing(events.typing);
  await announce.read(events.read);
  await announce.friendRequest(events.friendRequest);
  await announce.friendship(events.friendship);
  await until(() => heard.length === 5, { what: "five messages" });
  t.same(heard, [
    ["presence", CHANNELS.presence.encode(events.presence)],
    ["typing", CHANNELS.typing.encode(events.typing)],
    ["read", CHANNELS.read.encode(events.read)],
    ["friend.request", CHANNELS.friendRequest.encode(events.friendRequest)],
    ["friendship", CHANNELS.friendship.encode(events.friendship)],
  ]);
});

t.test("presence: friends see each other come online and go offline across nodes", async (t) => {
  const { store, one, two } = await cluster(t);
  store.names.set("1", "alice").set("2", "bob");
  store.befriend("1", "2");
  const b = session(bob);
  await two.realtime.join(b);
  const a = session(alice);
  let ready = false;
  await one.realtime.join(a, () => (ready = true));
  t.ok(ready, "the join said when the session watched its friends");
  t.same(
    ofType(a, "presence"),
    [{ type: "presence", principal: author(bob), status: "online" }],
    "alice is told bob is online already",
  );
  await until(() => ofType(b, "presence").length === 1, { what: "bob hearing alice online" });
  t.same(ofType(b, "presence"), [{ type: "presence", principal: author(alice), status: "online" }]);

  // a second connection of alice's is not news; its leave is not either, the last one's is
  const a2 = session(alice);
  await one.realtime.join(a2);
  await one.realtime.leave(a2);
  await one.realtime.leave(a);
  await until(() => ofType(b, "presence").length === 2, { what: "bob hearing alice offline" });
  t.same(ofType(b, "presence")[1], { type: "presence", principal: author(alice), status: "offline" });
});

t.test("a friendship made or ended while connected changes what both sides watch", async (t) => {
  const { store, one, two } = await cluster(t);
  store.names.set("1", "alice").set("3", "carol");
  const [a, c] = [session(alice), session(carol)];
  await one.realtime.join(a);
  await two.realtime.join(c);
  t.same([ofType(a, "presence"), ofType(c, "presence")], [[], []], "strangers watch nothing of each other");

  store.befriend("1", "3");
  await one.core.announce.friendship({ a: "1", b: "3" });
  await until(() => ofType(a, "presence").length === 1 && ofType(c, "presence").length === 1, {
    what: "both told the other is online",
  });
  t.same(ofType(a, "presence"), [{ type: "presence", principal: author(carol), status: "online" }]);
  t.same(ofType(c, "presence"), [{ type: "presence", principal: author(alice), status: "online" }]);

  store.befriend("1", "3", false);
  await two.core.announce.friendship({ a: "3", b: "1" });
  await until(() => ofType(a, "presence").length === 2 && ofType(c, "presence").length === 2, {
    what: "both told the other is offline",
  });
  t.same(ofType(a, "presence")[1], { type: "presence", principal: author(carol), status: "offline" });
  // no longer watched: carol's leave is not heard by alice
  await two.realtime.leave(c);
  await one.core.announce.read({ thread: "thread_1", from: author(alice), through: "msg_1", to: ["1"] });
  await until(() => ofType(a, "read").length === 1, { what: "a later event to alice" });
  t.equal(ofType(a, "presence").length, 2, "nothing of carol's presence after the friendship ended");
});

t.test("a moment goes to the watchers who are friends now: a friendship ended unheard carries none", async (t) => {
  const { store, one, two } = await cluster(t);
  store.names.set("1", "alice").set("2", "bob").set("3", "carol");
  store.befriend("1", "2");
  store.befriend("1", "3");
  const [a, b, c] = [session(alice), session(bob), session(carol)];
  await one.realtime.join(a);
  await two.realtime.join(b);
  await two.realtime.join(c);
  // alice and carol unfriend, but the friendship event is lost: carol's session still watches alice
  store.befriend("1", "3", false);
  const payload = (n: number) =>
    JSON.stringify({ id: `moment_${n}`, content: `friends only ${n}`, visibility: "friends", author: author(alice) });
  await one.core.announce.moment({ author: "1", visibility: "friends", payload: payload(1) });
  await until(() => ofType(b, "moment").length === 1 && ofType(a, "moment").length === 1, {
    what: "bob's and alice's own moment frames",
  });
  await one.core.announce.read({ thread: "thread_1", from: author(alice), through: "msg_1", to: ["3"] });
  await until(() => ofType(c, "read").length === 1, { what: "a later event to carol" });
  t.same(ofType(c, "moment"), [], "carol, no longer a friend, is not sent the friends-only moment");
  t.equal(ofType(b, "moment")[0]?.moment.id, "moment_1", "bob, a friend, is");

  // counts go by the same rule: not to the ex-friend, not to a friend who muted the author; to the actor
  const dan = principal("4", "dan");
  const d = session(dan);
  store.befriend("1", "4");
  await two.realtime.join(d);
  store.mutes.add("4 1");
  await one.core.announce.momentCounts({
    id: "1",
    author: "1",
    visibility: "friends",
    by: "2",
    likes: 1,
    comments: 0,
    rev: 1,
  });
  await until(() => ofType(b, "moment_counts").length === 1 && ofType(a, "moment_counts").length === 1, {
    what: "the actor's and the author's counts",
  });
  await one.core.announce.read({ thread: "thread_1", from: author(alice), through: "msg_2", to: ["3", "4"] });
  await until(() => ofType(c, "read").length === 2 && ofType(d, "read").length === 1, { what: "a later event" });
  t.same([ofType(c, "moment_counts"), ofType(d, "moment_counts")], [[], []], "not to the ex-friend, nor the muter");
});

t.test("typing: to the thread's other members, a start at most once per repeat window, a stop once", async (t) => {
  const { store, one, two, tick } = await cluster(t);
  store.members.set(9n, ["1", "2"]);
  const [a, b, c] = [session(alice), session(bob), session(carol)];
  await one.realtime.join(a);
  await two.realtime.join(b);
  await two.realtime.join(c);

  await one.realtime.typing(a, 9n, "start");
  await until(() => ofType(b, "typing").length === 1, { what: "bob hearing alice type" });
  t.same(ofType(b, "typing"), [
    { type: "typing", thread_id: "thread_9", from: author(alice), state: "start", expires_in: 10 },
  ]);
  await one.realtime.typing(a, 9n, "start"); // a repeat inside the window keeps the start alive, and goes nowhere
  await one.realtime.typing(a, 9n, "stop");
  await one.realtime.typing(a, 9n, "stop"); // a second stop has no start to end
  await until(() => ofType(b, "typing").length === 2, { what: "bob hearing alice stop" });
  t.same(ofType(b, "typing")[1], { type: "typing", thread_id: "thread_9", from: author(alice), state: "stop" });
  t.same([ofType(a, "typing"), ofType(c, "typing")], [[], []], "not the typist, not a non-member");
  await t.rejects(
    one.realtime.typing(c, 9n, "start"),
    { code: "not_found", status: 404 },
    "a non-member's typing is a missing thread",
  );

  // after the window a start goes out again; the typist's leave stops it
  tick(TYPING_REPEAT_MS);
  await one.realtime.typing(a, 9n, "start");
  await one.realtime.leave(a);
  await until(() => ofType(b, "typing").length === 4, { what: "the start and the leave's stop" });
  t.same(
    ofType(b, "typing")
      .slice(2)
      .map((f) => f.state),
    ["start", "stop"],
  );
  t.equal(a.typing.size, 0, "the leave cleared the session's typing");
});

t.test("a typing flood is answered and the connection closed", async (t) => {
  const { one } = await cluster(t);
  const a = session(alice);
  let admitted = 0;
  while (one.realtime.admitTyping(a)) admitted++;
  t.equal(admitted, 20, "the burst");
  t.match(ofType(a, "error"), [{ error: "rate_limited" }]);
  t.equal(a.ended, 4429);
});
