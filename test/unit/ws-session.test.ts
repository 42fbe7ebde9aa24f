// A WebSocket session (runtime/ws/session.ts, its streams' catch-up runtime/messaging/catch-up.ts) over a fake socket,
// on a hub whose stores are the in-memory twins (test/twins/), the memory engines and presence, and the real frame
// handler (handlers/ws.ts): the frames it writes (ready first, what is unacknowledged with its count, then live by the
// stream's topic, expired counts, answers to acks and pings, errors), a group joined and left while connected, and
// what closing leaves counted. Over real sockets and Postgres: test/ws.test.ts, test/group-cursors.test.ts.
import t, { type Test } from "tap";
import { onClientFrame } from "../../handlers/ws.ts";
import { asFull } from "../../runtime/auth.ts";
import { SlowRequests } from "../../runtime/http/slow-requests.ts";
import { createLogger } from "../../runtime/log.ts";
import { Messaging } from "../../runtime/messaging/hub.ts";
import { groupStream, inboxStream } from "../../runtime/messaging/stream-id.ts";
import { jsonCodec } from "../../runtime/ws/codec.ts";
import { Realtime } from "../../runtime/ws/realtime.ts";
import type { RealtimeStore } from "../../runtime/ws/realtime-store.ts";
import { type SessionDeps, type Socket, WsSession } from "../../runtime/ws/session.ts";
import { unitCore, type UnitCoreOptions, unitSends } from "../helpers/unit-core.ts";
import { until } from "../helpers/wait.ts";

interface Frame {
  type: string;
  ref?: string | number;
  message?: { id: string; body: string; delivery_count: number };
  [k: string]: unknown;
}

/** A node's hub and presence on the twins, the uWS app's topics faked, and sessions over fake sockets. */
async function world(t: Test, opts: UnitCoreOptions = {}) {
  const u = unitCore(t, opts);
  const hub = new Messaging(u.core, u.stores);
  await hub.start();
  // presence reads friends and thread members: from the twin's tables
  const realtimeStore: RealtimeStore = {
    friendsOf: async () => [],
    membersOf: async (thread) => [...(u.tables.groups.get(thread) ?? [])],
    pair: async () => ({ friends: false, a_name: "", a_avatar: null, b_name: "", b_avatar: null }),
    audienceAmong: async () => [],
  };
  const realtime = new Realtime(u.core, realtimeStore);
  await realtime.start();
  t.teardown(async () => {
    await realtime.close();
    await hub.close();
  });
  // the app's publish: to every fake socket subscribed to the topic
  const topics = new Map<string, Set<(data: string | Uint8Array) => void>>();
  hub.streams.channels.attach({
    publish: (topic, data) => {
      for (const deliver of topics.get(topic) ?? []) deliver(data);
    },
  });
  const deps: SessionDeps = {
    svc: { ...u.core, slow: new SlowRequests(u.core.log, u.core.metrics) },
    hub,
    realtime,
    onFrame: onClientFrame,
  };
  const sends = unitSends(u, hub, 6_000_000);
  const { agent, group } = sends;
  /** A session of `who`, opened as an upgrade that carried its credentials. */
  const connect = (who: string) => {
    const frames: Frame[] = [];
    const mine = new Set<string>();
    const take = (data: string | Uint8Array) => frames.push(JSON.parse(Buffer.from(data).toString("utf8")) as Frame);
    const socket: Socket = {
      send: (data) => (take(data), 1),
      getBufferedAmount: () => 0,
      end: () => {},
      cork: (cb) => cb(),
      subscribe: (topic) => {
        if (!topics.has(topic)) topics.set(topic, new Set());
        topics.get(topic)!.add(take);
        mine.add(topic);
        return true;
      },
      unsubscribe: (topic) => {
        mine.delete(topic);
        return topics.get(topic)?.delete(take) ?? false;
      },
    };
    const s = new WsSession(`fake-${who}`, socket, jsonCodec, deps, createLogger("silent"));
    s.open(asFull({ id: who, kind: "agent", displayName: u.tables.principals.get(who)!.name, avatarKey: null }));
    let closed: Promise<void> | undefined;
    const close = () => (closed ??= (s.end(1000, "bye"), s.onClose()));
    t.teardown(close);
    const frame = (f: unknown) => s.onMessage(new TextEncoder().encode(JSON.stringify(f)).buffer as ArrayBuffer, null);
    const messages = () => frames.filter((f) => f.type === "message").map((f) => f.message!);
    return { s, frames, topics: mine, close, frame, messages };
  };
  // the session's frames name a message by its API id
  const direct = async (from: string, to: string, body?: string) => {
    const m = await sends.direct(from, to, body);
    return { ...m, id: `msg_${m.raw}` };
  };
  const post = async (from: string, g: bigint, body?: string) => {
    const m = await sends.post(from, g, body);
    return { ...m, id: `msg_${m.raw}` };
  };
  const live = (stream: Parameters<typeof hub.streams.channels.published>[0]) =>
    hub.streams.channels.published(stream) !== undefined;
  const pending = async (who: string) =>
    (await hub.poll(who, 50, 0, () => {})).entries.map((e) => [`msg_${e.id}`, e.deliveryCount]);
  return { ...u, hub, agent, connect, direct, post, group, live, pending };
}

t.test(
  "ready first, then what is unacknowledged with its count, each stream caught up, then live by its topic",
  async (t) => {
    const w = await world(t);
    const [a, b] = [w.agent("Ann"), w.agent("Bo")];
    const g = w.group([a, b]);
    const d1 = await w.direct(a, b, "d1");
    const g1 = await w.post(a, g, "g1");
    const c = w.connect(b);
    await until(() => c.messages().length === 2, { what: "the catch-up" });
    t.same(c.frames[0], {
      type: "ready",
      principal: { id: b, display_name: "Bo", avatar_url: null },
      protocol: "json",
      heartbeat_seconds: 30,
    });
    t.same(
      c.messages().map((m) => [m.id, m.body, m.delivery_count]),
      [
        [d1.id, "d1", 1],
        [g1.id, "g1", 1],
      ],
    );
    await until(() => w.live(inboxStream(b)) && w.live(groupStream(g)), { what: "both streams live" });
    t.same([...c.topics].sort(), [`${b}:json`, `g:${g}:json`].sort(), "subscribed to each stream's topic");
    const d2 = await w.direct(a, b, "d2");
    const g2 = await w.post(a, g, "g2");
    t.same(
      c
        .messages()
        .slice(2)
        .map((m) => [m.id, m.delivery_count]),
      [
        [d2.id, 1],
        [g2.id, 1],
      ],
      "live, in order, by the topics",
    );
    t.same(
      await w.pending(b),
      [d1, g1, d2, g2].map((m) => [m.id, 2]),
      "a poll meanwhile counts them possibly delivered: the socket takes the streams live",
    );
  },
);

t.test(
  "client frames: an ack with a ref is answered once it took; ping; a bad frame gets an error frame",
  async (t) => {
    const w = await world(t);
    const [a, b] = [w.agent(), w.agent()];
    const m = await w.direct(a, b);
    const c = w.connect(b);
    await until(() => c.messages().length === 1);
    c.frame({ type: "ack", id: m.id, ref: "r1" });
    await until(() => c.frames.some((f) => f.ref === "r1"));
    t.same(
      c.frames.find((f) => f.ref === "r1"),
      { type: "ack", id: m.id, ref: "r1" },
    );
    t.same(await w.pending(b), [], "acknowledged for good");
    c.frame({ type: "ack", id: "msg_42", ref: "r2" });
    await until(() => c.frames.some((f) => f.ref === "r2"));
    t.match(
      c.frames.find((f) => f.ref === "r2"),
      { type: "error", error: "not_found" },
      "not b's: an error",
    );
    c.frame({ type: "ping", ref: 7 });
    await until(() => c.frames.some((f) => f.type === "pong"));
    t.same(c.frames.at(-1), { type: "pong", ref: 7 });
    c.s.onMessage(new TextEncoder().encode("{not json").buffer as ArrayBuffer, null);
    t.match(c.frames.at(-1), { type: "error", error: "invalid_request", message: "frame is not valid JSON" });
  },
);

t.test("a group joined while connected is taken live from the new cursor; left, its messages stop", async (t) => {
  const w = await world(t);
  const [a, x] = [w.agent(), w.agent()];
  const g = w.group([a]);
  await w.post(a, g, "before");
  const c = w.connect(x);
  await until(() => w.live(inboxStream(x)));
  await w.hub.streams.membersChanged(g, await w.stores.streams.join(g, [x]), []);
  await until(() => w.live(groupStream(g)), { what: "the group taken live" });
  const after = await w.post(a, g, "after");
  t.same(
    c.messages().map((m) => m.id),
    [after.id],
    "only what came after joining",
  );
  t.equal(await w.stores.streams.leave(g, x), true);
  await w.hub.streams.membersChanged(g, [], [x]);
  t.notOk(w.live(groupStream(g)), "left at once");
  await w.post(a, g, "gone");
  const d = await w.direct(a, x, "still here");
  t.same(
    c.messages().map((m) => m.id),
    [after.id, d.id],
    "the next message is a direct one",
  );
});

t.test("unacknowledged messages gone past retention are said once, before what follows", async (t) => {
  const w = await world(t, { retentionMs: 60_000 });
  const [a, b] = [w.agent(), w.agent()];
  await w.direct(a, b, "old");
  w.clock.ms += 120_000;
  w.tables.expire(w.core.horizons.messages());
  const kept = await w.direct(a, b, "kept");
  const c = w.connect(b);
  await until(() => c.messages().length === 1);
  t.same(
    c.frames.map((f) => f.type),
    ["ready", "expired", "message"],
  );
  t.same(c.frames[1], { type: "expired", count: 1 });
  t.equal(c.messages()[0]!.id, kept.id);
});

t.test("closed, what was published to it counts as delivered and what came after does not", async (t) => {
  const w = await world(t);
  const [a, b] = [w.agent(), w.agent()];
  const c = w.connect(b);
  await until(() => w.live(inboxStream(b)));
  const m1 = await w.direct(a, b);
  t.equal(c.messages().length, 1);
  await c.close();
  await until(() => w.tables.cursor(b, inboxStream(b))?.delivered === m1.seq, { what: "the mark where it stopped" });
  t.notOk(w.live(inboxStream(b)));
  const m2 = await w.direct(a, b);
  t.same(await w.pending(b), [
    [m1.id, 2],
    [m2.id, 1],
  ]);
  const again = w.connect(b);
  await until(() => again.messages().length === 2, { what: "a reconnect's catch-up" });
  t.same(
    again.messages().map((m) => [m.id, m.delivery_count]),
    [
      [m1.id, 3],
      [m2.id, 2],
    ],
    "redelivered, counted on",
  );
});
