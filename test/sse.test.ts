// Server-Sent Events (GET /v1/events) on a real node, read by fetch over real sockets: the WebSocket's frames arrive
// as events; a reconnect with Last-Event-ID loses nothing and each message is acknowledged once; one-time tickets;
// the per-principal limit; a draining node ends its streams with a close event.
import t from "tap";
import { call, registerAgent } from "./helpers/http.ts";
import { startTestNode } from "./helpers/node.ts";
import { SSE_HEARTBEAT_MS } from "../runtime/ws/event-streams.ts";
import { SseReader } from "./helpers/sse.ts";
import { until } from "./helpers/wait.ts";
import { ack, createGroup, pending, postToGroup, sendOk } from "./messaging-helpers.ts";

const bearer = (token: string) => ({ Authorization: `Bearer ${token}` });

t.test("Server-Sent Events", async (t) => {
  let clockOffset = 0;
  const node = await startTestNode(t, { env: { FLOCK_SSE_STREAMS: "2" }, now: () => Date.now() + clockOffset });
  const base = node.url;
  const events = `${base}/v1/events`;

  t.test("the WebSocket's frames arrive as events: ready, what waited, live messages, a friend request", async (t) => {
    const a = await registerAgent(base, "Ada");
    const b = await registerAgent(base, "Bo");
    const early = await sendOk(base, a, b.id, "sent while offline");
    const s = await SseReader.open(events, bearer(b.token));
    t.teardown(() => s.close());
    t.equal(s.res.status, 200);
    t.match(s.res.headers.get("content-type"), /^text\/event-stream/);
    t.equal(s.res.headers.get("cache-control"), "no-store");
    const ready = await s.next("ready");
    t.same(ready.principal, { id: b.id, display_name: "Bo", avatar_url: null });
    t.equal(s.retry, 1000, "retry: is sent");
    const first = await s.next<{ message: Record<string, unknown> }>("message");
    t.same(first.message, { ...early, delivery_count: 1 }, "an unacknowledged message first, as a WebSocket has it");
    t.equal(first._id, early.id, "a message event's id is its message's id");
    const live = await sendOk(base, a, b.id, "live");
    const second = await s.next<{ message: Record<string, unknown> }>("message");
    t.same(second.message, { ...live, delivery_count: 1 });
    t.equal(second._id, live.id);
    const req = await call(base, "POST", "/v1/friends/request", { token: a.token, json: { to: b.id } });
    t.equal(req.status, 201);
    const fr = await s.next<{ from: { id: string } }>("friend_request");
    t.equal(fr.from.id, a.id, "a realtime event comes as its own event type");
    t.equal(s.events.find((e) => e.event === "ready")?.id, undefined, "frames that are not messages carry no id");
    t.equal((await ack(base, b, early.id)).status, 204, "acks go over HTTP");
    t.equal((await ack(base, b, live.id)).status, 204);
    t.same(await pending(base, b), []);
  });

  t.test("a reconnect with Last-Event-ID loses nothing, and every message is acknowledged once", async (t) => {
    const a = await registerAgent(base, "Ada");
    const b = await registerAgent(base, "Bo");
    const sent: string[] = [];
    for (let i = 0; i < 5; i++) sent.push((await sendOk(base, a, b.id, `m${i}`)).id);
    const acked = new Map<string, number>();
    const ackOnce = async (id: string) => {
      acked.set(id, (acked.get(id) ?? 0) + 1);
      t.equal((await ack(base, b, id)).status, 204, `ack ${id}`);
    };
    const one = await SseReader.open(events, bearer(b.token));
    const got1: string[] = [];
    for (let i = 0; i < 5; i++) got1.push((await one.next<{ message: { id: string } }>("message")).message.id);
    t.same(got1, sent, "in order");
    await ackOnce(got1[0]!);
    await ackOnce(got1[1]!);
    const last = one.lastId;
    t.equal(last, sent[4], "the last id seen");
    one.close();
    await until(() => node.svc.events.heldBy(b.id) === 0, { what: "the first stream closed on the node" });
    // sent while no stream is open
    for (let i = 5; i < 8; i++) sent.push((await sendOk(base, a, b.id, `m${i}`)).id);
    const two = await SseReader.open(events, { ...bearer(b.token), "Last-Event-ID": last! });
    t.teardown(() => two.close());
    t.equal(two.res.status, 200);
    const got2: { id: string; delivery_count: number }[] = [];
    for (let i = 0; i < 6; i++)
      got2.push((await two.next<{ message: { id: string; delivery_count: number } }>("message")).message);
    t.same(
      got2.map((m) => m.id),
      sent.slice(2),
      "what was delivered and not acknowledged comes again, then what came meanwhile, in order",
    );
    t.same(
      got2.map((m) => m.delivery_count),
      [2, 2, 2, 1, 1, 1],
      "the ones handed out before say so",
    );
    t.match(two.comments.join("\n"), new RegExp(`resuming after ${last}`), "the resume is acknowledged");
    for (const m of got2) await ackOnce(m.id);
    t.same(await pending(base, b), [], "nothing left");
    t.same([...acked.keys()].sort(), [...sent].sort(), "every message acknowledged");
    t.ok(
      [...acked.values()].every((n) => n === 1),
      "each once",
    );
  });

  t.test("group messages, and messages sent on another node, reach the stream live", async (t) => {
    const other = await startTestNode(t, { schema: node.schema, prefix: node.prefix });
    const a = await registerAgent(base, "Ada");
    const b = await registerAgent(base, "Bo");
    const g = await createGroup(base, a, [b]);
    const s = await SseReader.open(events, bearer(b.token));
    t.teardown(() => s.close());
    await s.next("ready");
    const inGroup = await postToGroup(base, a, g, "to the group");
    const gm = await s.next<{ message: { id: string; to: string; delivery_count: number } }>("message");
    t.same([gm.message.id, gm.message.to, gm._id], [inGroup, g, inGroup], "a group message, with its id");
    const across = await sendOk(other.url, a, b.id, "from the other node");
    t.equal((await s.next<{ message: { id: string } }>("message")).message.id, across.id, "a send on another node");
    const groupAcross = await postToGroup(other.url, a, g, "group, other node");
    t.equal((await s.next<{ message: { id: string } }>("message")).message.id, groupAcross);
    for (const id of [inGroup, across.id, groupAcross]) t.equal((await ack(base, b, id)).status, 204);
    t.same(await pending(base, b), []);
  });

  t.test("Last-Event-ID as a query parameter; a malformed one is refused", async (t) => {
    const a = await registerAgent(base, "Ada");
    const b = await registerAgent(base, "Bo");
    const m = await sendOk(base, a, b.id, "x");
    const s = await SseReader.open(`${events}?last_event_id=${m.id}`, bearer(b.token));
    t.teardown(() => s.close());
    t.equal((await s.next<{ message: { id: string } }>("message")).message.id, m.id);
    const bad = await fetch(events, { headers: { ...bearer(b.token), "Last-Event-ID": "not-an-id" } });
    t.equal(bad.status, 400);
    t.equal(((await bad.json()) as { error: string }).error, "invalid_request");
  });

  t.test("tickets: one use, then 401; expired, unknown and absent 401; never a token in the URL", async (t) => {
    const b = await registerAgent(base, "Bo");
    const issued = await call(base, "POST", "/v1/events/ticket", { token: b.token });
    t.equal(issued.status, 201);
    t.match(issued.body, { ticket: /^[A-Za-z0-9_-]{32}$/, expires_in: 30 });
    const s = await SseReader.open(`${events}?ticket=${issued.body.ticket}`);
    t.teardown(() => s.close());
    t.equal(s.res.status, 200);
    t.equal((await s.next<{ principal: { id: string } }>("ready")).principal.id, b.id, "the ticket's principal");
    const again = await fetch(`${events}?ticket=${issued.body.ticket}`);
    t.equal(again.status, 401, "a ticket is good once");
    t.match(await again.json(), { error: "unauthorized", message: /ticket/ });
    const unknown = await fetch(`${events}?ticket=${"A".repeat(32)}`);
    t.equal(unknown.status, 401);
    const none = await fetch(events);
    t.equal(none.status, 401);
    t.match(await none.json(), { error: "unauthorized" });
    const badToken = await fetch(events, { headers: bearer("flk_nope") });
    t.equal(badToken.status, 401);
    const late = await call(base, "POST", "/v1/events/ticket", { token: b.token });
    clockOffset += 31_000;
    t.teardown(() => {
      clockOffset -= 31_000;
    });
    const expired = await fetch(`${events}?ticket=${late.body.ticket}`);
    t.equal(expired.status, 401, "past expires_in");
    const anon = await fetch(`${base}/v1/events/ticket`, { method: "POST" });
    t.equal(anon.status, 401, "a ticket needs a token");
  });

  t.test("at most FLOCK_SSE_STREAMS streams per principal; one closed makes room", async (t) => {
    const b = await registerAgent(base, "Bo");
    const one = await SseReader.open(events, bearer(b.token));
    const two = await SseReader.open(events, bearer(b.token));
    t.teardown(() => two.close());
    await one.next("ready");
    await two.next("ready");
    const three = await fetch(events, { headers: bearer(b.token) });
    t.equal(three.status, 429);
    t.match(await three.json(), { error: "rate_limited", limit: 2, message: /FLOCK_SSE_STREAMS/ });
    const other = await registerAgent(base, "Di");
    const theirs = await SseReader.open(events, bearer(other.token));
    t.teardown(() => theirs.close());
    t.equal(theirs.res.status, 200, "another principal's streams are its own");
    one.close();
    await until(() => node.svc.events.heldBy(b.id) === 1, { what: "the closed stream released" });
    const again = await SseReader.open(events, bearer(b.token));
    t.teardown(() => again.close());
    t.equal(again.res.status, 200);
  });

  t.test("a rotated token ends its streams with a close event (4401), as it closes sockets", async (t) => {
    const b = await registerAgent(base, "Bo");
    const s = await SseReader.open(events, bearer(b.token));
    await s.next("ready");
    const rotated = await call(base, "POST", "/v1/agents/me/token", { token: b.token });
    t.equal(rotated.status, 200);
    t.same(await s.next("close"), { code: 4401, reason: "token no longer valid", _id: undefined });
    await until(() => s.ended, { what: "the stream's end" });
    t.equal(node.svc.events.heldBy(b.id), 0);
  });

  t.test("the heartbeat is a comment", async (t) => {
    const b = await registerAgent(base, "Bo");
    const s = await SseReader.open(events, bearer(b.token));
    t.teardown(() => s.close());
    const ready = await s.next<{ heartbeat_seconds: number }>("ready");
    t.equal(
      ready.heartbeat_seconds,
      SSE_HEARTBEAT_MS / 1000,
      "the ready frame tells the stream's own heartbeat, not the WebSocket's",
    );
    node.svc.events.ping();
    await until(() => s.comments.includes("ping"), { what: "a ping comment" });
    t.pass("`: ping` came");
  });
});

t.test("a draining node ends its streams with a close event, then refuses new ones", async (t) => {
  const node = await startTestNode(t, { engine: "memory" });
  const b = await registerAgent(node.url, "Bo");
  const s = await SseReader.open(`${node.url}/v1/events`, bearer(b.token));
  await s.next("ready");
  const closing = node.close();
  const close = await s.next<{ code: number; reason: string }>("close");
  t.same(close, { code: 1001, reason: "server shutting down", _id: undefined });
  await until(() => s.ended, { what: "the stream's end" });
  t.equal(node.svc.events.size, 0);
  await closing;
});
