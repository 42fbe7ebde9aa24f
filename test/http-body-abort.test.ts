// A client that goes away in the middle of its request body: the request ends (answered to nobody, counted as a
// 400), rather than waiting forever for data uWS will never deliver; before, it stayed in flight, so every drain
// of the node waited its whole FLOCK_SHUTDOWN_GRACE for it, and a traced send's span never ended.
import { connect } from "node:net";
import t from "tap";
import { registerAgent } from "./helpers/http.ts";
import { startTestNode } from "./helpers/node.ts";
import { parseScrape, total } from "./helpers/scrape.ts";
import { until } from "./helpers/wait.ts";

t.test("a body cut off by the client ends its request", async (t) => {
  const node = await startTestNode(t);
  const alice = await registerAgent(node.url, "alice");
  const bob = await registerAgent(node.url, "bob");
  const ended = async () =>
    total(parseScrape(await node.svc.metrics.registry.metrics()), "flock_http_requests_total", {
      route: "/v1/messages",
      status: "400",
    });
  t.equal(await ended(), 0);
  // The node authenticates a request as it starts, before it waits for the body, and caches the token: that is how the
  // test sees the request taken in. Registering cached alice's token, so the node forgets it first (once its own
  // broadcast of that has come back, which drops it again).
  let forgotten = false;
  node.svc.auth.onForget((id) => (forgotten ||= id === alice.id));
  await node.svc.auth.forget(alice.id);
  await until(() => forgotten, { ms: 10_000, what: "the node to hear its own forget of alice" });
  t.equal(node.svc.auth.cached(alice.token), undefined, "alice's token is not cached before her request");
  const { port } = new URL(node.url);
  const sock = connect(Number(port), "127.0.0.1");
  await new Promise<void>((resolve, reject) => sock.once("connect", resolve).once("error", reject));
  const body = JSON.stringify({ to: bob.id, body: "never finished" });
  sock.write(
    `POST /v1/messages HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${alice.token}\r\nContent-Type: application/json\r\n` +
      `Content-Length: ${body.length + 100}\r\nX-Forwarded-For: 198.51.100.7\r\n\r\n${body}`,
  );
  // the headers and part of the body are in (one write, read at once), and the request waits for the rest
  await until(() => node.svc.auth.cached(alice.token) !== undefined, {
    ms: 10_000,
    what: "the node to take the request in (alice's token authenticated)",
  });
  t.equal(await ended(), 0, "the request waits for the rest of its body");
  sock.destroy();
  // the abort reaches the node at once; a generous bound, to show it happens, not how fast
  await until(async () => (await ended()) > 0, { ms: 10_000, every: 20, what: "the request to end" });
  t.equal(await ended(), 1, "the request ended, answered to nobody");
  const inbox = await fetch(`${node.url}/v1/messages/pending?timeout=0`, {
    headers: { authorization: `Bearer ${bob.token}`, "x-forwarded-for": "198.51.100.8" },
  });
  t.same(((await inbox.json()) as { messages: unknown[] }).messages, [], "and nothing was sent");
});
