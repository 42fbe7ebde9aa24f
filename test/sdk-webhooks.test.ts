// The SDK and CLI side of webhooks, against a real node: `verifyWebhook` in a plain node:http receiver (as the README
// shows) takes the node's signed requests and refuses a changed body, a wrong secret and a stale timestamp; the SDK's
// setWebhook / webhook / testWebhook / rotateWebhookSecret / webhookDeliveries / deleteWebhook, and flockctl's
// `webhook set|show|test|rotate|deliveries|rm`, each against the same node.
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import t from "tap";
import { Webhook } from "standardwebhooks";
import { Flock, FlockError, verifyWebhook, type WebhookEvent } from "../client/index.ts";
import { flock as cli } from "./helpers/cli.ts";
import { registerAgent } from "./helpers/http.ts";
import { startTestNode } from "./helpers/node.ts";
import { until } from "./helpers/wait.ts";

const node = await startTestNode(t, { engine: "memory", env: { FLOCK_WEBHOOK_ALLOW_PRIVATE: "1" } });

/** A receiver written as the README's example: verify with the SDK, 204 once kept, 400 when the check fails. */
let secret = "";
const kept: WebhookEvent[] = [];
let refused = 0;
const server = createServer((req, res) => {
  void (async () => {
    let body = "";
    for await (const chunk of req) body += String(chunk);
    try {
      kept.push(verifyWebhook(secret, req.headers, body));
      res.writeHead(204).end();
    } catch {
      refused++;
      res.writeHead(400).end();
    }
  })();
});
await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
t.teardown(() => new Promise<void>((r) => server.close(() => r())));
const hookUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}/flock`;

t.test("verifyWebhook takes the node's requests and refuses what was changed", async (t) => {
  const agent = await registerAgent(node.url, "Hooked");
  const sender = await registerAgent(node.url, "Sender");
  const sdk = new Flock({ baseUrl: node.url, token: agent.token });
  const set = await sdk.setWebhook({ url: hookUrl });
  t.match(set.secret, /^whsec_/, "the secret, once");
  secret = set.secret!;
  t.equal((await sdk.webhook()).secret, undefined, "never shown again");

  const ping = await sdk.testWebhook();
  t.match(ping, { ok: true, status: 204 }, "the ping verified and acknowledged");
  t.equal(kept.at(-1)?.type, "webhook.ping");

  const m = await new Flock({ baseUrl: node.url, token: sender.token }).send(agent.id, "hello by webhook");
  await until(() => kept.some((e) => e.type === "message.created" && e.data.id === m.id), {
    ms: 15_000,
    what: "the message at the receiver",
  });
  const got = kept.find((e) => e.type === "message.created" && e.data.id === m.id);
  t.equal(got?.type === "message.created" && got.data.body, "hello by webhook", "typed: the message as pending has it");
  await until(async () => (await sdk.pending({ timeout: 0 })).length === 0, {
    ms: 10_000,
    what: "the 204 acknowledged it",
  });

  // what the SDK refuses, on a request signed as the node signs it
  const signer = new Webhook(secret);
  const body = JSON.stringify({ type: "webhook.ping", id: "msg_1", created_at: new Date().toISOString(), data: {} });
  const at = new Date();
  const headers = { "Webhook-Id": "msg_1", "Webhook-Timestamp": String(Math.floor(at.getTime() / 1000)) };
  const signed = { ...headers, "Webhook-Signature": signer.sign("msg_1", at, body) };
  t.equal(verifyWebhook(secret, new Headers(signed), body).type, "webhook.ping", "a fetch Headers object works too");
  t.throws(() => verifyWebhook(secret, signed, body.replace("ping", "pong")), "a changed body");
  t.throws(() => verifyWebhook(`whsec_${Buffer.alloc(32, 7).toString("base64")}`, signed, body), "another secret");
  const old = new Date(Date.now() - 10 * 60_000);
  t.throws(
    () =>
      verifyWebhook(
        secret,
        {
          "webhook-id": "msg_1",
          "webhook-timestamp": String(Math.floor(old.getTime() / 1000)),
          "webhook-signature": signer.sign("msg_1", old, body),
        },
        body,
      ),
    "a timestamp 10 minutes old",
  );
  t.throws(() => verifyWebhook(secret, headers, body), "no signature");
  t.equal(refused, 0, "the receiver refused nothing the node sent");

  const rotated = await sdk.rotateWebhookSecret();
  t.match(rotated.secret, /^whsec_/);
  t.ok(Date.parse(rotated.previous_valid_until) > Date.now(), "the old secret signs on for a while");
  secret = rotated.secret;
  t.match(await sdk.testWebhook(), { ok: true }, "the new secret verifies");
  const { deliveries } = await sdk.webhookDeliveries({ limit: 2 });
  t.equal(deliveries.length, 2, "limit");
  t.match(deliveries[0], { type: "webhook.ping", ok: true, status: 204 }, "newest first");
  await sdk.deleteWebhook();
  const gone = await sdk.webhook().catch((e: unknown) => e);
  t.ok(gone instanceof FlockError && gone.status === 404, "removed: 404");
});

t.test("flockctl webhook set, show, test, rotate, deliveries, rm", async (t) => {
  const agent = await registerAgent(node.url, "Cli hooked");
  const env = { FLOCK_URL: node.url, FLOCK_TOKEN: agent.token };
  const set = await cli(["webhook", "set", hookUrl, "--mode", "when_offline", "--offline-after", "30"], env);
  t.equal(set.code, 0, set.stderr);
  t.match(set.stdout, /active\nevents message\.created; mode when_offline after 30 s; at most 10 at once/);
  const shown = /secret (whsec_\S+)/.exec(set.stdout);
  t.ok(shown, "the secret printed once");
  secret = shown![1]!;
  const show = await cli(["webhook", "show", "--json"], env);
  t.match(JSON.parse(show.stdout), { webhook: { url: hookUrl, mode: "when_offline", offline_after: 30 } });
  t.notMatch(show.stdout, /whsec_/, "show never prints the secret");
  const test = await cli(["webhook", "test"], env);
  t.match(test.stdout, /^ok: 204 in \d+ ms/, test.stderr);
  const rotate = await cli(["webhook", "rotate"], env);
  t.match(rotate.stdout, /^secret whsec_\S+ {3}# shown this once\nthe old secret signs too until /);
  const list = await cli(["webhook", "deliveries", "--limit", "5"], env);
  t.match(list.stdout, /webhook\.ping #\d+ {2}ok 204/);
  const bad = await cli(["webhook", "set", hookUrl, "--mode", "sometimes"], env);
  t.equal(bad.code, 2, "a bad --mode is a usage error");
  t.match(bad.stderr, /--mode must be one of always, when_offline/);
  t.equal((await cli(["webhook", "rm"], env)).stdout.trim(), "webhook removed");
  const after = await cli(["webhook", "show"], env);
  t.equal(after.code, 4, "not found once removed");
});
