// Agents' webhooks over real sockets (runtime/webhooks/, handlers/webhooks.ts): a node on real Postgres and Redis
// (and the memory engines where they differ) POSTs to a receiver on this machine (FLOCK_WEBHOOK_ALLOW_PRIVATE), which
// verifies each signature with the standardwebhooks package. Each "done when" point of issue 55's webhooks is a test:
// signature, 2xx acks, 500 retries with the same webhook-id, order per stream, when_offline, rotation, disable,
// deliveries, and the SSRF refusals of a node without the setting.
import t from "tap";
import { call, type Registered, registerAgent } from "./helpers/http.ts";
import { signInWithWallet } from "./helpers/humans.ts";
import { type EngineKind, startTestNode } from "./helpers/node.ts";
import { until } from "./helpers/wait.ts";
import { Client, createGroup, pending, sendOk } from "./messaging-helpers.ts";
import { Receiver } from "./webhook-receiver.ts";

const ALLOW = { FLOCK_WEBHOOK_ALLOW_PRIVATE: "1" };
const HOOK = "/v1/agents/me/webhook";

async function setHook(base: string, who: Registered, body: Record<string, unknown>) {
  const r = await call(base, "PUT", HOOK, { token: who.token, json: body });
  if (r.status !== 201 && r.status !== 200) throw new Error(`webhook not set: ${r.status} ${r.text}`);
  return r;
}

for (const engine of ["redis", "memory"] as EngineKind[]) {
  t.test(`${engine}: a signed message.created, taken by a 2xx, acknowledges the message`, async (t) => {
    const node = await startTestNode(t, { engine, env: ALLOW });
    const [a, b] = [await registerAgent(node.url, "hooked"), await registerAgent(node.url, "sender")];
    const rx = await Receiver.start(t);
    const set = await setHook(node.url, a, { url: rx.url });
    t.equal(set.status, 201, "made");
    const secret = set.body.secret as string;
    t.match(secret, /^whsec_[A-Za-z0-9+/]{43}=$/, "a Standard Webhooks secret of 32 bytes");
    t.match(set.body.webhook, { url: rx.url, events: ["message.created"], mode: "always", status: "active" });
    rx.secrets = [secret];
    const sent = await sendOk(node.url, b, a.id, "to your endpoint");
    await until(() => rx.got.length > 0, { ms: 10_000, what: "the webhook request" });
    const r = rx.got[0]!;
    t.same(r.verified, [true], "Webhook.verify accepts its signature");
    t.equal(r.id, sent.id, "webhook-id is the message's id");
    t.match(r.json, { type: "message.created", id: sent.id, data: { id: sent.id, body: "to your endpoint" } });
    t.equal(r.json.data["delivery_count"], 1);
    await until(async () => (await pending(node.url, a)).length === 0, { ms: 10_000, what: "the message acked" });
    const again = await setHook(node.url, a, { url: rx.url, max_connections: 3 });
    t.equal(again.status, 200, "a replace answers 200");
    t.equal(again.body.secret, undefined, "without the secret");
    t.equal((await call(node.url, "GET", HOOK, { token: a.token })).body.webhook.max_connections, 3);
    t.equal(rx.got.length, 1, "nothing sent twice");
  });
}

t.test("a 500 is retried with the same webhook-id while the message stays pending; the 2xx acks it", async (t) => {
  const node = await startTestNode(t, { env: ALLOW });
  const [a, b] = [await registerAgent(node.url, "hooked"), await registerAgent(node.url, "sender")];
  const rx = await Receiver.start(t);
  let failing = true;
  rx.answer = () => (failing ? 500 : 200);
  rx.secrets = [(await setHook(node.url, a, { url: rx.url })).body.secret];
  const sent = await sendOk(node.url, b, a.id, "retry me");
  await until(() => rx.got.length >= 2, { ms: 15_000, what: "a retry" });
  const still = await pending(node.url, a);
  t.same(
    still.map((m) => m.id),
    [sent.id],
    "pending meanwhile: a poll may take it",
  );
  failing = false;
  await until(async () => (await pending(node.url, a)).length === 0, { ms: 20_000, what: "the ack after a 2xx" });
  t.ok(
    rx.got.every((r) => r.id === sent.id && r.verified[0]),
    "every attempt carries the same webhook-id, signed",
  );
  const counts = rx.got.map((r) => r.json.data["delivery_count"] as number);
  t.ok(
    counts.every((c, i) => i === 0 || c > counts[i - 1]!),
    `delivery_count counts attempts: ${counts.join(", ")}`,
  );
  const d = (await call(node.url, "GET", `${HOOK}/deliveries`, { token: a.token })).body.deliveries as {
    id: string;
    status: number;
    ok: boolean;
    attempt: number;
  }[];
  t.equal(d[0]!.ok, true, "the newest attempt succeeded");
  t.ok(
    d.slice(1).every((x) => x.status === 500 && !x.ok && x.id === sent.id),
    "the ones before answered 500",
  );
  t.equal(
    (await call(node.url, "GET", HOOK, { token: a.token })).body.webhook.failing_since,
    null,
    "the success ended the run of failures",
  );
});

t.test(
  "events go out in order per stream (inbox and group); a failed one holds back the later ones of its stream",
  async (t) => {
    const node = await startTestNode(t, { env: ALLOW });
    const [a, b] = [await registerAgent(node.url, "hooked"), await registerAgent(node.url, "sender")];
    const group = await createGroup(node.url, b, [a]);
    const rx = await Receiver.start(t);
    // the second direct message fails once: the direct ones after it must wait for it; the group's need not
    let failedOnce = false;
    rx.answer = (r) => {
      if (r.json.data["body"] === "d1" && !failedOnce) {
        failedOnce = true;
        return 503;
      }
      return 200;
    };
    rx.secrets = [(await setHook(node.url, a, { url: rx.url, max_connections: 2 })).body.secret];
    // the sends go while the endpoint's delivery is held up by a pending first message
    const direct: string[] = [];
    const grouped: string[] = [];
    for (let i = 0; i < 4; i++) {
      direct.push((await sendOk(node.url, b, a.id, `d${i}`)).id);
      const g = await call(node.url, "POST", `/v1/groups/${group}/messages`, {
        token: b.token,
        json: { body: `g${i}` },
      });
      t.equal(g.status, 201);
      grouped.push(g.body.id);
    }
    await until(async () => (await pending(node.url, a)).length === 0, { ms: 20_000, what: "everything acked" });
    const secondDirect = direct[1]!;
    const firstSeen = (id: string) => rx.got.findIndex((r) => r.json.data["id"] === id);
    t.same(
      direct.map(firstSeen).every((v, i, all) => i === 0 || v > all[i - 1]!),
      true,
      "direct messages first reached the endpoint in their order",
    );
    t.same(
      grouped.map(firstSeen).every((v, i, all) => i === 0 || v > all[i - 1]!),
      true,
      "group messages too",
    );
    const retriedAt = rx.got.findIndex((r, i) => r.json.data["id"] === secondDirect && i > firstSeen(secondDirect));
    t.ok(retriedAt > 0, "the failed one was retried");
    for (const later of direct.slice(2))
      t.ok(firstSeen(later) > retriedAt, "a later direct message went only after the failed one was taken");
    t.equal(new Set(rx.messages()).size, direct.length + grouped.length, "every message came");
    t.equal(rx.got.length, direct.length + grouped.length + 1, "each once, but the one retried");
  },
);

t.test("when_offline: what a socket took (acked) within offline_after is not sent; what it left is", async (t) => {
  const node = await startTestNode(t, { env: ALLOW });
  const [a, b] = [await registerAgent(node.url, "hooked"), await registerAgent(node.url, "sender")];
  const rx = await Receiver.start(t);
  rx.secrets = [(await setHook(node.url, a, { url: rx.url, mode: "when_offline", offline_after: 5 })).body.secret];
  const socket = await Client.open(node.url, { token: a.token });
  t.teardown(() => socket.close());
  await socket.nextOfType("ready");
  const taken = await sendOk(node.url, b, a.id, "the socket takes this");
  const frame = await socket.next((f) => f.type === "message" && f.message?.id === taken.id, 5000);
  socket.send({ type: "ack", id: frame.message.id, ref: "r1" });
  await socket.next((f) => f.type === "ack" && f.ref === "r1", 5000);
  const left = await sendOk(node.url, b, a.id, "the socket leaves this");
  await socket.next((f) => f.type === "message" && f.message?.id === left.id, 5000);
  await until(() => rx.got.length > 0, { ms: 20_000, what: "the unacknowledged message, after offline_after" });
  t.same(rx.messages(), [left.id], "only the message no socket acknowledged");
  t.ok(Date.now() - Date.parse(left.created_at) >= 5000, "and not before offline_after");
  t.same(rx.got[0]!.verified, [true]);
  await until(async () => (await pending(node.url, a)).length === 0, { ms: 10_000, what: "it acked by the 2xx" });
});

t.test("rotation: both signatures during the grace, only the new one after (hand clock)", async (t) => {
  const clock = { t: Date.now() };
  const node = await startTestNode(t, { env: ALLOW, now: () => clock.t });
  const a = await registerAgent(node.url, "hooked");
  const rx = await Receiver.start(t);
  const old = (await setHook(node.url, a, { url: rx.url })).body.secret as string;
  const rot = await call(node.url, "POST", `${HOOK}/rotate`, { token: a.token });
  t.equal(rot.status, 200);
  const fresh = rot.body.secret as string;
  t.not(fresh, old);
  t.equal(Date.parse(rot.body.previous_valid_until), clock.t + 86_400_000, "the old one is honoured for 24 h");
  rx.secrets = [fresh, old];
  const ping = await call(node.url, "POST", `${HOOK}/test`, { token: a.token });
  t.match(ping.body, { ok: true, status: 200, error: null });
  t.match(ping.body.id, /^ping_\d+$/);
  t.equal(rx.got[0]!.signature.split(" ").length, 2, "two signatures");
  t.same(rx.got[0]!.verified, [true, true], "a receiver with either secret verifies");
  t.match(rx.got[0]!.json, { type: "webhook.ping", data: { agent_id: a.id } });
  clock.t += 86_400_000 + 1000;
  // the receiver's verify checks the timestamp against the real clock: the node's is a day ahead, so read the
  // signatures instead, each as standardwebhooks signs with that timestamp
  const { Webhook } = await import("standardwebhooks");
  await call(node.url, "POST", `${HOOK}/test`, { token: a.token });
  const after = rx.got[1]!;
  const at = new Date(Number(after.timestamp) * 1000);
  t.equal(after.signature, new Webhook(fresh).sign(after.id, at, after.body), "after the grace: only the new one");
  t.not(after.signature, new Webhook(old).sign(after.id, at, after.body));
  t.equal(
    (await call(node.url, "POST", `${HOOK}/rotate`, { token: (await registerAgent(node.url)).token })).status,
    404,
  );
});

t.test("an endpoint failing for a day is disabled, the agent told by a frame and GET (hand clock)", async (t) => {
  const clock = { t: Date.now() };
  const node = await startTestNode(t, { env: ALLOW, now: () => clock.t });
  const [a, b] = [await registerAgent(node.url, "hooked"), await registerAgent(node.url, "sender")];
  const rx = await Receiver.start(t);
  rx.answer = () => 500;
  await setHook(node.url, a, { url: rx.url });
  const socket = await Client.open(node.url, { token: a.token });
  t.teardown(() => socket.close());
  await socket.nextOfType("ready");
  const sent = await sendOk(node.url, b, a.id, "never taken");
  await until(() => rx.got.length >= 1, { ms: 10_000, what: "the first attempt" });
  const hook = async () => (await call(node.url, "GET", HOOK, { token: a.token })).body.webhook;
  await until(async () => (await hook()).failing_since !== null, { ms: 10_000, what: "the run of failures shown" });
  t.equal((await hook()).status, "active", "a failure alone does not disable");
  clock.t += 86_400_000;
  const frame = await socket.next((f) => f.type === "webhook_disabled", 20_000);
  t.match(frame.reason, /failing/);
  const shown = (await call(node.url, "GET", HOOK, { token: a.token })).body.webhook;
  t.match(shown, { status: "disabled", disabled_reason: /failing/ });
  const attempts = rx.got.length;
  t.same(
    (await pending(node.url, a)).map((m) => m.id),
    [sent.id],
    "the message is still pending for polls and sockets",
  );
  rx.answer = () => 200;
  const back = await setHook(node.url, a, { url: rx.url });
  t.match(back.body.webhook, { status: "active", disabled_reason: null, failing_since: null }, "set again: enabled");
  await until(async () => (await pending(node.url, a)).length === 0, { ms: 20_000, what: "delivered once re-enabled" });
  t.ok(rx.got.length > attempts);
});

t.test("deliveries: newest first, the last 100 kept, limit", async (t) => {
  const node = await startTestNode(t, { engine: "memory", env: ALLOW });
  const a = await registerAgent(node.url, "hooked");
  const rx = await Receiver.start(t);
  await setHook(node.url, a, { url: rx.url });
  const ids: string[] = [];
  for (let i = 0; i < 102; i++) ids.push((await call(node.url, "POST", `${HOOK}/test`, { token: a.token })).body.id);
  const all = (await call(node.url, "GET", `${HOOK}/deliveries`, { token: a.token })).body.deliveries;
  t.equal(all.length, 100, "the last 100 kept");
  t.same(
    all.map((d: { id: string }) => d.id),
    ids.slice(2).reverse(),
    "newest first",
  );
  t.match(all[0], { type: "webhook.ping", attempt: 1, status: 200, ok: true, error: null, latency_ms: Number });
  const two = (await call(node.url, "GET", `${HOOK}/deliveries?limit=2`, { token: a.token })).body.deliveries;
  t.equal(two.length, 2);
  t.equal((await call(node.url, "GET", `${HOOK}/deliveries?limit=0`, { token: a.token })).status, 400);
});

t.test("the SSRF rules of a node without FLOCK_WEBHOOK_ALLOW_PRIVATE; a redirect is not followed", async (t) => {
  const strict = await startTestNode(t, { engine: "memory" });
  const a = await registerAgent(strict.url, "hooked");
  for (const url of [
    "http://example.com/hook",
    "https://127.0.0.1/hook",
    "https://10.1.2.3/hook",
    "https://172.16.0.9/hook",
    "https://192.168.1.20/hook",
    "https://169.254.169.254/latest/meta-data",
    "https://[::1]/hook",
    "https://[fc00::7]/hook",
    "https://[fd00::7]/hook",
    "https://0.0.0.0/hook",
    "https://localhost/hook",
  ]) {
    const r = await call(strict.url, "PUT", HOOK, { token: a.token, json: { url } });
    t.equal(r.status, 400, `${url} refused`);
    t.match(r.body, { error: "invalid_request", field: "url" });
  }
  t.equal((await call(strict.url, "GET", HOOK, { token: a.token })).status, 404, "nothing was set");
  const person = await signInWithWallet(strict.url);
  t.equal(
    (await call(strict.url, "PUT", HOOK, { token: person.token, json: { url: "https://example.com/" } })).status,
    403,
    "a person's token: 403, as on every agent-only route",
  );
  t.equal((await call(strict.url, "GET", HOOK, { token: person.token })).status, 403);

  const node = await startTestNode(t, { engine: "memory", env: ALLOW });
  const b = await registerAgent(node.url, "hooked");
  const elsewhere = await Receiver.start(t);
  const rx = await Receiver.start(t);
  rx.answer = () => ({ status: 307, headers: { location: elsewhere.url } });
  await setHook(node.url, b, { url: rx.url });
  const ping = await call(node.url, "POST", `${HOOK}/test`, { token: b.token });
  t.match(ping.body, { ok: false, status: 307, error: /redirects are not followed/ });
  t.equal(elsewhere.got.length, 0, "the redirect's target got nothing");
});
