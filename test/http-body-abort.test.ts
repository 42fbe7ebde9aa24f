// A client that goes away in the middle of its request body: the request ends (answered to nobody, counted as a
// 400), rather than waiting forever for data uWS will never deliver; before, it stayed in flight, so every drain
// of the node waited its whole FLOCK_SHUTDOWN_GRACE for it, and a traced send's span never ended.
import { connect } from "node:net";
import { setTimeout as sleep } from "node:timers/promises";
import t from "tap";
import { registerAgent } from "./helpers/http.ts";
import { startTestNode } from "./helpers/node.ts";
import { parseScrape, total } from "./helpers/scrape.ts";

t.test("a body cut off by the client ends its request", async (t) => {
  const node = await startTestNode(t);
  const alice = await registerAgent(node.url, "alice");
  const bob = await registerAgent(node.url, "bob");
  const ended = async () => total(parseScrape(await node.svc.metrics.registry.metrics()), "flock_http_requests_total", { route: "/v1/messages", status: "400" });
  t.equal(await ended(), 0);
  const { port } = new URL(node.url);
  const sock = connect(Number(port), "127.0.0.1");
  await new Promise<void>((resolve, reject) => sock.once("connect", resolve).once("error", reject));
  const body = JSON.stringify({ to: bob.id, body: "never finished" });
  sock.write(
    `POST /v1/messages HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${alice.token}\r\nContent-Type: application/json\r\n` +
      `Content-Length: ${body.length + 100}\r\nX-Forwarded-For: 198.51.100.7\r\n\r\n${body}`,
  );
  await sleep(100); // the headers and part of the body are in: the request waits for the rest
  sock.destroy();
  // the abort reaches the node at once; a generous bound, to show it happens, not how fast
  const deadline = Date.now() + 5000;
  while ((await ended()) === 0 && Date.now() < deadline) await sleep(20);
  t.equal(await ended(), 1, "the request ended, answered to nobody");
  const inbox = await fetch(`${node.url}/v1/messages/pending?timeout=0`, { headers: { authorization: `Bearer ${bob.token}`, "x-forwarded-for": "198.51.100.8" } });
  t.same(((await inbox.json()) as { messages: unknown[] }).messages, [], "and nothing was sent");
});
