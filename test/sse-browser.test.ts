// A browser's own EventSource against GET /v1/events, in headless Chromium from a page on another origin (CORS): it
// cannot send a token header, so the page asks for a one-time ticket and opens the stream with it; message events
// carry their ids (lastEventId); acks go over fetch. A ticket is good once, so the page reopens with a fresh one and
// the last id as `last_event_id` (what an EventSource's own retry with the old URL cannot do): the message it did not
// acknowledge comes again, and nothing else is lost.
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import t from "tap";
import { registerAgent } from "./helpers/http.ts";
import { startTestNode } from "./helpers/node.ts";
import { launch, NO_BROWSER } from "./helpers/web.ts";
import { sendOk } from "./messaging-helpers.ts";

/** What the page runs: open(api, token) starts the stream; window.got holds what came. */
const PAGE = `<!doctype html><title>sse</title><script>
window.got = { ready: 0, messages: [], tickets: 0, statuses: [] };
window.open2 = async (api, token, lastId) => {
  const r = await fetch(api + "/v1/events/ticket", { method: "POST", headers: { authorization: "Bearer " + token } });
  const { ticket } = await r.json();
  window.got.tickets++;
  const url = api + "/v1/events?ticket=" + ticket + (lastId ? "&last_event_id=" + encodeURIComponent(lastId) : "");
  const es = new EventSource(url);
  window.es = es;
  es.addEventListener("ready", () => window.got.ready++);
  es.addEventListener("message", (e) => {
    const m = JSON.parse(e.data).message;
    window.got.messages.push({ id: m.id, body: m.body, count: m.delivery_count, lastEventId: e.lastEventId });
  });
  es.addEventListener("error", () => window.got.statuses.push(es.readyState));
};
window.ack = (api, token, id) =>
  fetch(api + "/v1/messages/" + id + "/ack", { method: "POST", headers: { authorization: "Bearer " + token } })
    .then((r) => r.status);
</script>`;

if (NO_BROWSER) {
  t.plan(0, NO_BROWSER);
} else {
  t.test("EventSource with a ticket, from another origin", async (t) => {
    const node = await startTestNode(t, { engine: "memory" });
    const api = node.url;
    const site = createServer((_req, res) => res.writeHead(200, { "content-type": "text/html" }).end(PAGE));
    await new Promise<void>((resolve) => site.listen(0, "127.0.0.1", resolve));
    t.teardown(() => new Promise<void>((resolve) => site.close(() => resolve())));
    const browser = await launch();
    t.teardown(() => browser.close());
    const page = await browser.newPage();
    await page.goto(`http://127.0.0.1:${(site.address() as AddressInfo).port}/`);

    const a = await registerAgent(api, "Ada");
    const b = await registerAgent(api, "Bo");
    const first = await sendOk(api, a, b.id, "one");
    await page.evaluate(
      ([u, k]) => (window as unknown as { open2: (u: string, k: string) => Promise<void> }).open2(u!, k!),
      [api, b.token],
    );
    const got = () =>
      page.evaluate(
        () =>
          (
            window as unknown as {
              got: { ready: number; messages: { id: string; body: string; count: number; lastEventId: string }[] };
            }
          ).got,
      );
    await page.waitForFunction(() => (window as unknown as { got: { messages: unknown[] } }).got.messages.length === 1);
    const second = await sendOk(api, a, b.id, "two");
    await page.waitForFunction(() => (window as unknown as { got: { messages: unknown[] } }).got.messages.length === 2);
    let seen = await got();
    t.equal(seen.ready, 1, "the ticket's stream is authenticated");
    t.same(
      seen.messages.map((m) => [m.id, m.body, m.count, m.lastEventId]),
      [
        [first.id, "one", 1, first.id],
        [second.id, "two", 1, second.id],
      ],
      "what waited, then live; each event's lastEventId is its message's id",
    );
    const ack = (id: string) =>
      page.evaluate(
        ([u, k, i]) =>
          (window as unknown as { ack: (u: string, k: string, i: string) => Promise<number> }).ack(u!, k!, i!),
        [api, b.token, id],
      );
    t.equal(await ack(first.id), 204, "acked over fetch");
    // the page leaves the stream and comes back with a fresh ticket and the last id it saw
    await page.evaluate(() => (window as unknown as { es: EventSource }).es.close());
    const third = await sendOk(api, a, b.id, "three");
    await page.evaluate(
      ([u, k, l]) =>
        (window as unknown as { open2: (u: string, k: string, l: string) => Promise<void> }).open2(u!, k!, l!),
      [api, b.token, second.id],
    );
    await page.waitForFunction(() => (window as unknown as { got: { messages: unknown[] } }).got.messages.length === 4);
    seen = await got();
    t.same(
      seen.messages.slice(2).map((m) => [m.id, m.count]),
      [
        [second.id, 2],
        [third.id, 1],
      ],
      "the unacknowledged one again, then what came meanwhile; the acknowledged one not",
    );
    t.equal(await ack(second.id), 204);
    t.equal(await ack(third.id), 204);
    await page.evaluate(() => (window as unknown as { es: EventSource }).es.close());
  });
}
