// The SDK's live connection falls back: in front of a real node, a TCP proxy that answers 400 to every WebSocket
// upgrade (as proxies that do not pass WebSockets do) and forwards every other request; `flock.messages({ transport:
// "ws" })` then takes Server-Sent Events, receives and acknowledges. Without an event stream either (the proxy
// answers 404 to /v1/events too), it long polls.
import { createConnection, createServer, type Socket } from "node:net";
import t from "tap";
import { Flock } from "../client/index.ts";
import { registerAgent } from "./helpers/http.ts";
import { startTestNode } from "./helpers/node.ts";
import { until } from "./helpers/wait.ts";
import { pending, sendOk } from "./messaging-helpers.ts";

interface Proxy {
  url: string;
  /** Requests seen, by kind. */
  seen: { upgrades: number; events: number; polls: number };
  /** Cut every connection through it and stop listening. */
  close(): Promise<void>;
  /** Listen again on the same port. */
  reopen(): Promise<void>;
}

/** A proxy to `port` refusing upgrades, and `/v1/events` too when `noEvents`. */
async function refusingProxy(port: number, noEvents = false): Promise<Proxy> {
  const seen = { upgrades: 0, events: 0, polls: 0 };
  const sockets = new Set<Socket>();
  const server = createServer((client) => {
    sockets.add(client);
    client.on("close", () => sockets.delete(client));
    let head = Buffer.alloc(0);
    const onData = (chunk: Buffer) => {
      head = Buffer.concat([head, chunk]);
      const end = head.indexOf("\r\n\r\n");
      if (end < 0) return;
      client.off("data", onData);
      const text = head.subarray(0, end).toString("latin1");
      const path = text.split(" ")[1] ?? "";
      const refuse = (status: string) => {
        client.end(`HTTP/1.1 ${status}\r\nContent-Length: 0\r\nConnection: close\r\n\r\n`);
      };
      if (/^upgrade:\s*websocket/im.test(text)) {
        seen.upgrades++;
        return refuse("400 Bad Request");
      }
      if (path.startsWith("/v1/events")) {
        seen.events++;
        if (noEvents) return refuse("404 Not Found");
      }
      if (path.startsWith("/v1/messages/pending")) seen.polls++;
      // one connection upstream per client connection; what follows on it (kept alive) is forwarded as it is
      const upstream = createConnection(port, "127.0.0.1");
      sockets.add(upstream);
      upstream.on("close", () => sockets.delete(upstream));
      upstream.write(head);
      client.pipe(upstream).pipe(client);
      upstream.on("error", () => client.destroy());
      client.on("error", () => upstream.destroy());
    };
    client.on("data", onData);
  });
  const listen = (port: number) => new Promise<void>((resolve) => server.listen(port, "127.0.0.1", resolve));
  await listen(0);
  const { port: own } = server.address() as { port: number };
  return {
    url: `http://127.0.0.1:${own}`,
    seen,
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        if (!server.listening) return resolve();
        server.close(() => resolve());
      }),
    reopen: () => listen(own),
  };
}

t.test("the SDK's live connection behind a proxy that refuses WebSocket upgrades", async (t) => {
  const node = await startTestNode(t, { engine: "memory" });

  t.test("falls back to Server-Sent Events: receives, acknowledges, and a message sent while it runs", async (t) => {
    const proxy = await refusingProxy(node.port);
    t.teardown(() => proxy.close());
    const a = await registerAgent(node.url, "Ada");
    const b = await registerAgent(node.url, "Bo");
    const early = await sendOk(node.url, a, b.id, "before");
    const flock = new Flock({ baseUrl: proxy.url, token: b.token });
    const ac = new AbortController();
    const got: { id: string; body: string }[] = [];
    let late: { id: string } | undefined;
    for await (const m of flock.messages({ transport: "ws", signal: ac.signal })) {
      got.push({ id: m.id, body: m.body });
      if (got.length === 1) late = await sendOk(node.url, a, b.id, "while live");
      if (got.length === 2) break;
    }
    t.same(
      got.map((m) => m.id),
      [early.id, late!.id],
      "both messages, in order",
    );
    t.equal(proxy.seen.upgrades, 1, "the upgrade was tried once and refused");
    t.ok(proxy.seen.events >= 1, "then the event stream");
    t.equal(proxy.seen.polls, 0, "no long poll");
    await until(async () => (await pending(node.url, b)).length === 0, { what: "both acknowledged" });
    t.equal(node.svc.events.size, 0, "the stream was let go when the loop ended");
  });

  t.test("a stream that drops mid-way resumes with Last-Event-ID and loses nothing", async (t) => {
    const proxy = await refusingProxy(node.port);
    t.teardown(() => proxy.close());
    const a = await registerAgent(node.url, "Ada");
    const b = await registerAgent(node.url, "Bo");
    const sent: string[] = [];
    for (let i = 0; i < 3; i++) sent.push((await sendOk(node.url, a, b.id, `m${i}`)).id);
    const flock = new Flock({ baseUrl: proxy.url, token: b.token });
    const ac = new AbortController();
    t.teardown(() => ac.abort());
    // the streams the node opens (counted there: the proxy sees only each connection's first request)
    const events = node.svc.events;
    const start = events.start.bind(events);
    let opened = 0;
    events.start = (...args) => (opened++, start(...args));
    t.teardown(() => {
      events.start = start;
    });
    const ids: string[] = [];
    let dropped = false;
    for await (const m of flock.messages({ transport: "ws", signal: ac.signal })) {
      ids.push(m.id);
      if (ids.length === 2 && !dropped) {
        dropped = true;
        // cut every connection through the proxy (the stream with it), and send one while it is down
        await proxy.close();
        await proxy.reopen();
        sent.push((await sendOk(node.url, a, b.id, "m3")).id);
      }
      if (new Set(ids).size === sent.length && sent.length === 4) break;
    }
    t.same([...new Set(ids)], sent, "every message, in order, none lost");
    t.equal(opened, 2, "the event stream was opened again, once");
    t.equal(proxy.seen.upgrades, 1, "the WebSocket was not tried again");
    await until(async () => (await pending(node.url, b)).length === 0, { what: "every message acknowledged" });
  });

  t.test("without an event stream either, it long polls", async (t) => {
    const proxy = await refusingProxy(node.port, true);
    t.teardown(() => proxy.close());
    const a = await registerAgent(node.url, "Ada");
    const b = await registerAgent(node.url, "Bo");
    const m1 = await sendOk(node.url, a, b.id, "polled");
    const flock = new Flock({ baseUrl: proxy.url, token: b.token });
    const ac = new AbortController();
    for await (const m of flock.messages({ transport: "ws", signal: ac.signal, timeout: 1 })) {
      t.equal(m.id, m1.id);
      break;
    }
    t.equal(proxy.seen.upgrades, 1);
    t.equal(proxy.seen.events, 1, "the event stream was tried once and refused");
    t.ok(proxy.seen.polls >= 1, "then the long poll");
    await until(async () => (await pending(node.url, b)).length === 0, { what: "acknowledged" });
  });
});
