// Web Push for people (docs/ARCHITECTURE.md, "Web Push"), against a local push service that speaks the protocol and
// decrypts what it gets (test/helpers/push-server.ts): a person with no open page gets a VAPID-signed push of a
// direct message, a group message and a friend request, each decrypting to its payload with their unread count; a
// person with an open socket gets none; a push service's 410 forgets the subscription; bad subscriptions are 400, an
// agent's 404, and an endpoint on a private address is refused unless the operator allows it.
import t from "tap";
import WebSocket from "ws";
import { isRefusedAddress } from "../runtime/net/outbound-guard.ts";
import { endpointRefusal } from "../runtime/push/endpoint.ts";
import { PushPayload } from "../schema/push.ts";
import { call, registerAgent } from "./helpers/http.ts";
import { signInWithWallet, type SignedInHuman } from "./helpers/humans.ts";
import { startTestNode, type TestNode } from "./helpers/node.ts";
import { startPushServer, type TestSubscription } from "./helpers/push-server.ts";
import { befriend } from "./helpers/social.ts";
import { until } from "./helpers/wait.ts";

async function subscribe(node: TestNode, who: SignedInHuman, sub: TestSubscription): Promise<void> {
  const r = await call(node.url, "POST", "/v1/users/me/push-subscriptions", { token: who.token, json: sub.json });
  if (r.status !== 201) throw new Error(`subscribe: ${r.status} ${r.text}`);
}

/** A WebSocket of `who`, open and ready (its presence entry written): close it to close the page. */
async function openPage(node: TestNode, who: SignedInHuman): Promise<WebSocket> {
  const ws = new WebSocket(`${node.url.replace(/^http/, "ws")}/v1/ws`, ["flock.json"], {
    headers: { authorization: `Bearer ${who.token}` },
  });
  await new Promise<void>((resolve, reject) => {
    ws.on("message", (data) => {
      if ((JSON.parse(String(data)) as { type: string }).type === "ready") resolve();
    });
    ws.on("error", reject);
  });
  return ws;
}

async function closePage(node: TestNode, who: SignedInHuman, ws: WebSocket): Promise<void> {
  await new Promise<void>((resolve) => {
    ws.on("close", () => resolve());
    ws.close();
  });
  await until(async () => !(await node.svc.engines.presence.online([who.id], Date.now())).has(who.id), {
    what: "the closed page's presence gone",
    ms: 10_000,
  });
}

t.test("pushes to people with no open page", async (t) => {
  const node = await startTestNode(t, {
    engine: "redis",
    env: { FLOCK_PUSH_ALLOW_PRIVATE: "true", FLOCK_PUSH_SUBSCRIPTIONS: "3" },
  });
  const push = await startPushServer(t);
  const key = await call<{ public_key: string }>(node.url, "GET", "/v1/push/key");
  t.equal(key.status, 200);
  t.match(key.body.public_key, /^[A-Za-z0-9_-]{87}$/, "the VAPID public key, base64url");
  t.equal(node.svc.push.vapid.source, "postgres", "made once and kept in Postgres (no keys configured)");

  const alice = await signInWithWallet(node.url);
  const bob = await signInWithWallet(node.url);
  await befriend(node.url, alice, bob);
  const bobs = push.subscribe();
  await subscribe(node, bob, bobs);
  t.ok(node.svc.push.subscribers.has(bob.id), "the node knows bob holds a subscription");

  await t.test("a direct message to a closed page", async (t) => {
    const sent = await call(node.url, "POST", "/v1/messages", {
      token: alice.token,
      json: { to: bob.id, body: "hi bob" },
    });
    t.equal(sent.status, 201);
    await until(() => bobs.received.length === 1, { what: "bob's push", ms: 10_000 });
    const got = bobs.received[0]!;
    t.equal(got.vapidKey, key.body.public_key, "signed with the key browsers subscribe with");
    t.equal(got.claims.aud, push.origin, "the JWT's audience is the push service's origin");
    t.match(got.claims.sub, /^mailto:/);
    t.equal(got.headers.urgency, "high");
    t.ok(Number(got.headers.ttl) > 0, "a TTL");
    const payload = PushPayload.parse(JSON.parse(got.text));
    t.same(payload, {
      type: "message",
      title: alice.display_name,
      body: "hi bob",
      url: `#/chat/t/${sent.body.thread_id}`,
      thread_id: sent.body.thread_id,
      unread: 1,
    });
    t.same(push.refused, [], "nothing the push service refused");

    await call(node.url, "POST", "/v1/messages", { token: alice.token, json: { to: bob.id, body: "again" } });
    await until(() => bobs.received.length === 2, { what: "bob's second push", ms: 10_000 });
    t.equal(PushPayload.parse(JSON.parse(bobs.received[1]!.text)).unread, 2, "the unread count the badge shows");
  });

  await t.test("no push while the person has an open page", async (t) => {
    const before = bobs.received.length;
    const ws = await openPage(node, bob);
    const sent = await call(node.url, "POST", "/v1/messages", {
      token: alice.token,
      json: { to: bob.id, body: "live" },
    });
    t.equal(sent.status, 201);
    // the push work is taken before the send is answered: drained, it has decided
    await node.svc.push.notifier.drain();
    t.equal(bobs.received.length, before, "nothing pushed to a person whose socket is open");
    await closePage(node, bob, ws);
    await call(node.url, "POST", "/v1/messages", { token: alice.token, json: { to: bob.id, body: "closed again" } });
    await until(() => bobs.received.length === before + 1, { what: "the push once the page closed", ms: 10_000 });
    t.equal(PushPayload.parse(JSON.parse(bobs.received[before]!.text)).body, "closed again");
  });

  await t.test("a group message", async (t) => {
    const g = await call(node.url, "POST", "/v1/groups", {
      token: alice.token,
      json: { name: "Hikers", members: [bob.id] },
    });
    t.equal(g.status, 201, g.text);
    const before = bobs.received.length;
    const sent = await call(node.url, "POST", `/v1/groups/${g.body.group.id}/messages`, {
      token: alice.token,
      json: { body: "trail at nine" },
    });
    t.equal(sent.status, 201, sent.text);
    await until(() => bobs.received.length === before + 1, { what: "bob's group push", ms: 10_000 });
    const payload = PushPayload.parse(JSON.parse(bobs.received[before]!.text));
    t.equal(payload.title, `${alice.display_name} in Hikers`);
    t.equal(payload.url, `#/chat/t/${g.body.group.thread_id}`);
    t.equal(payload.thread_id, g.body.group.thread_id);
  });

  await t.test("a friend request", async (t) => {
    const carol = await signInWithWallet(node.url);
    const carols = push.subscribe();
    await subscribe(node, carol, carols);
    const r = await call(node.url, "POST", "/v1/friends/request", { token: alice.token, json: { to: carol.id } });
    t.ok(r.status === 201 || r.status === 202, r.text);
    await until(() => carols.received.length === 1, { what: "carol's push", ms: 10_000 });
    t.same(PushPayload.parse(JSON.parse(carols.received[0]!.text)), {
      type: "friend_request",
      title: `${alice.display_name} wants to be friends`,
      body: "Accept or decline on the Friends page.",
      url: "#/friends",
      thread_id: null,
      unread: 0,
    });
  });

  await t.test("a 410 from the push service forgets the subscription", async (t) => {
    const dave = await signInWithWallet(node.url);
    await befriend(node.url, alice, dave);
    const daves = push.subscribe();
    await subscribe(node, dave, daves);
    daves.answer = 410;
    await call(node.url, "POST", "/v1/messages", { token: alice.token, json: { to: dave.id, body: "gone?" } });
    await until(
      async () => (await node.svc.sql`select 1 from push_subscriptions where principal = ${dave.id}`).length === 0,
      { what: "dave's subscription forgotten", ms: 10_000 },
    );
    await until(() => !node.svc.push.subscribers.has(dave.id), { what: "the node's cache told", ms: 10_000 });
    t.equal(daves.received.length, 0);
  });

  await t.test("removing a subscription", async (t) => {
    const r = await call(node.url, "DELETE", "/v1/users/me/push-subscriptions", {
      token: bob.token,
      json: { endpoint: bobs.json.endpoint },
    });
    t.equal(r.status, 204);
    t.notOk(node.svc.push.subscribers.has(bob.id));
    const again = await call(node.url, "DELETE", "/v1/users/me/push-subscriptions", {
      token: bob.token,
      json: { endpoint: bobs.json.endpoint },
    });
    t.equal(again.status, 404, "no such subscription any more");
    const before = bobs.received.length;
    await call(node.url, "POST", "/v1/messages", { token: alice.token, json: { to: bob.id, body: "unheard" } });
    await node.svc.push.notifier.drain();
    t.equal(bobs.received.length, before, "no push after unsubscribing");
  });

  await t.test("bad input", async (t) => {
    const erin = await signInWithWallet(node.url);
    const good = push.subscribe().json;
    const bad = async (json: unknown, field: string) => {
      const r = await call(node.url, "POST", "/v1/users/me/push-subscriptions", { token: erin.token, json });
      t.equal(r.status, 400, `${field}: ${r.text}`);
      t.equal(r.body.error, "invalid_request");
      t.equal(r.body.field, field);
    };
    await bad({ keys: good.keys }, "endpoint");
    await bad({ ...good, endpoint: "ftp://push.example/x" }, "endpoint");
    await bad({ endpoint: good.endpoint }, "keys");
    await bad({ ...good, keys: { ...good.keys, p256dh: "AAAA" } }, "keys.p256dh");
    await bad({ ...good, keys: { ...good.keys, auth: Buffer.alloc(8).toString("base64url") } }, "keys.auth");
    await bad({ ...good, keys: { ...good.keys, p256dh: "!".repeat(87) } }, "keys.p256dh");
    // 65 bytes, 0x04 first, yet no point of the curve
    await bad({ ...good, keys: { ...good.keys, p256dh: Buffer.alloc(65, 4).toString("base64url") } }, "keys.p256dh");
    const agent = await registerAgent(node.url, "pushy");
    const r = await call(node.url, "POST", "/v1/users/me/push-subscriptions", { token: agent.token, json: good });
    t.equal(r.status, 403, "people only: an agent gets 403, as on every person-only route");
    const max = node.svc.push.maxSubscriptions;
    for (let i = 0; i < max; i++) await subscribe(node, erin, push.subscribe());
    const over = await call(node.url, "POST", "/v1/users/me/push-subscriptions", { token: erin.token, json: good });
    t.equal(over.status, 409, `one past FLOCK_PUSH_SUBSCRIPTIONS (${max})`);
  });
});

t.test("endpoints on private addresses are refused unless allowed", async (t) => {
  const node = await startTestNode(t, { engine: "memory" });
  const person = await signInWithWallet(node.url);
  const push = await startPushServer(t);
  const keys = push.subscribe().json.keys;
  for (const endpoint of [
    push.subscribe().json.endpoint, // http:// on loopback
    "https://127.0.0.1/push/1",
    "https://10.1.2.3/push/1",
    "https://[::1]/push/1",
    "https://169.254.169.254/latest",
    "https://localhost/push/1",
    "https://user:pw@push.example/x",
  ]) {
    const r = await call(node.url, "POST", "/v1/users/me/push-subscriptions", {
      token: person.token,
      json: { endpoint, keys },
    });
    t.equal(r.status, 400, `${endpoint}: ${r.text}`);
    t.equal(r.body.field, "endpoint");
  }
  t.equal(endpointRefusal("https://fcm.googleapis.com/fcm/send/abc", false), undefined, "a push service's endpoint");
  t.ok(isRefusedAddress("::ffff:127.0.0.1"), "an IPv4-mapped loopback");
  t.ok(isRefusedAddress("fd00::1"), "unique local");
  t.ok(isRefusedAddress("100.64.0.1"), "carrier-grade NAT");
  t.notOk(isRefusedAddress("8.8.8.8"));
});

t.test("two nodes share the key and learn each other's subscriptions; the sender's node pushes", async (t) => {
  const env = { FLOCK_PUSH_ALLOW_PRIVATE: "true" };
  const a = await startTestNode(t, { engine: "redis", env });
  const b = await startTestNode(t, { engine: "redis", env, schema: a.schema, prefix: a.prefix });
  t.equal(b.svc.push.vapid.publicKey, a.svc.push.vapid.publicKey, "one key pair, made once, read by both");
  const push = await startPushServer(t);
  const alice = await signInWithWallet(a.url);
  const bob = await signInWithWallet(a.url);
  await befriend(a.url, alice, bob);
  const bobs = push.subscribe();
  await subscribe(a, bob, bobs);
  await until(() => b.svc.push.subscribers.has(bob.id), { what: "node b told of bob's subscription", ms: 10_000 });
  // alice sends through node b: b stored it, b pushes, a does not
  const sent = await call(b.url, "POST", "/v1/messages", { token: alice.token, json: { to: bob.id, body: "via b" } });
  t.equal(sent.status, 201);
  await until(() => bobs.received.length === 1, { what: "the push from node b", ms: 10_000 });
  await Promise.all([a.svc.push.notifier.drain(), b.svc.push.notifier.drain()]);
  t.equal(bobs.received.length, 1, "pushed once");
  t.equal(bobs.received[0]!.vapidKey, a.svc.push.vapid.publicKey);
  const r = await call(b.url, "DELETE", "/v1/users/me/push-subscriptions", {
    token: bob.token,
    json: { endpoint: bobs.json.endpoint },
  });
  t.equal(r.status, 204);
  await until(() => !a.svc.push.subscribers.has(bob.id), { what: "node a told of the removal", ms: 10_000 });
});
