// The Server-Sent Events socket a WebSocket session writes to (runtime/ws/sse-socket.ts) and the SDK's event-stream
// parser (client/event-stream.ts), each reading the other's output: framing, ids, corks, local topics, the buffer
// bounds (backpressure, slow consumer) and the end.
import t from "tap";
import { EventStreamParser } from "../../client/event-stream.ts";
import { LocalTopics } from "../../runtime/ws/local-topics.ts";
import { HIGH_WATER, MAX_BUFFER } from "../../runtime/ws/session.ts";
import { sseEvent, SseSocket } from "../../runtime/ws/sse-socket.ts";

const enc = new TextEncoder();
/** Everything the body holds now, read without flowing it. */
function drain(s: SseSocket): string {
  let out = "";
  for (let c = s.body.read() as Buffer | null; c !== null; c = s.body.read() as Buffer | null) out += c.toString();
  return out;
}

t.test("a frame is one event named by its type; a message frame's id is its message's", async (t) => {
  t.equal(sseEvent('{"type":"ready","x":1}'), 'event: ready\ndata: {"type":"ready","x":1}\n\n');
  t.equal(
    sseEvent('{"type":"message","message":{"id":"msg_12","body":"a"}}'),
    'id: msg_12\nevent: message\ndata: {"type":"message","message":{"id":"msg_12","body":"a"}}\n\n',
  );
  t.equal(
    sseEvent('{"a":1,"type":"presence"}'),
    'event: presence\ndata: {"a":1,"type":"presence"}\n\n',
    "type not first",
  );
  t.equal(
    sseEvent('{"type":"error",\n"m":1}'),
    'event: error\ndata: {"type":"error",\ndata: "m":1}\n\n',
    "a line break",
  );
});

t.test("the parser reads what the socket writes, however the bytes are cut", async (t) => {
  const s = new SseSocket(new LocalTopics(), 1500);
  s.send('{"type":"ready"}');
  s.send(enc.encode('{"type":"message","message":{"id":"msg_1","body":"é"}}'));
  s.ping();
  s.send('{"type":"typing","thread_id":"thread_1"}');
  s.end(1001, "server shutting down");
  const bytes = enc.encode(drain(s));
  for (const step of [1, 3, 7, bytes.length]) {
    const p = new EventStreamParser();
    const events = [];
    for (let i = 0; i < bytes.length; i += step) events.push(...p.push(bytes.subarray(i, i + step)));
    t.same(
      events.map((e) => [e.type, e.lastId]),
      [
        ["ready", undefined],
        ["message", "msg_1"],
        ["typing", "msg_1"],
        ["close", "msg_1"],
      ],
      `cut every ${step} bytes`,
    );
    t.equal(p.retry, 1500);
    t.same(JSON.parse(events[1]!.data), { type: "message", message: { id: "msg_1", body: "é" } });
    t.same(JSON.parse(events[3]!.data), { code: 1001, reason: "server shutting down" });
  }
});

t.test("the parser: CR, CR LF, comments, fields without a value, a kept last id", async (t) => {
  const p = new EventStreamParser("msg_0");
  const got = p.push(enc.encode(": hi\r\ndata: a\r\ndata\r\n\r\nevent: x\rid: msg_9\rdata: b\r\rid: msg_10\n\n"));
  t.same(
    got.map((e) => [e.type, e.data, e.lastId]),
    [
      ["message", "a\n", "msg_0"],
      ["x", "b", "msg_9"],
    ],
  );
  t.equal(p.lastId, "msg_10", "an id with no data still moves the last id");
  t.same(p.push(enc.encode("data: c\r")), [], "a CR at the end waits for what follows");
  t.same(
    p.push(enc.encode("\n\n")).map((e) => e.data),
    ["c"],
  );
});

t.test("a cork's writes go out as one chunk", async (t) => {
  const s = new SseSocket(new LocalTopics(), 1000);
  drain(s);
  const chunks: string[] = [];
  s.body.on("data", (c: Buffer) => chunks.push(c.toString()));
  s.cork(() => {
    s.send('{"type":"ready"}');
    s.send('{"type":"pong"}');
  });
  t.equal(chunks.length, 1);
  t.match(chunks[0], /event: ready[\s\S]*event: pong/);
});

t.test("local topics: subscribed frames arrive, unsubscribed and ended ones do not", async (t) => {
  const topics = new LocalTopics();
  const s = new SseSocket(topics, 1000);
  drain(s);
  t.equal(s.subscribe("P1:json"), true);
  t.equal(topics.size, 1);
  topics.publish("P1:json", '{"type":"message","message":{"id":"msg_5"}}', false);
  topics.publish("P2:json", '{"type":"message","message":{"id":"msg_6"}}', false);
  t.match(drain(s), /^id: msg_5\n/);
  s.unsubscribe("P1:json");
  t.equal(topics.size, 0);
  s.subscribe("P1:json");
  s.end(1000, "bye");
  t.equal(topics.size, 0, "an ended socket leaves its topics");
  t.equal(s.send('{"type":"ready"}'), 2, "nothing is written after the end");
});

t.test("backpressure: 0 past HIGH_WATER, the read resumes the session; past MAX_BUFFER it is cut", async (t) => {
  const s = new SseSocket(new LocalTopics(), 1000);
  let drains = 0;
  let closes = 0;
  s.hooks = { onDrain: () => drains++, onClose: () => closes++ };
  const big = `{"type":"error","message":"${"x".repeat(64 * 1024)}"}`;
  let status = 1;
  let n = 0;
  while (status === 1) {
    status = s.send(big);
    n++;
  }
  t.equal(status, 0, "behind");
  t.ok(s.getBufferedAmount() >= HIGH_WATER);
  t.ok(n <= Math.ceil(HIGH_WATER / big.length) + 1);
  drain(s);
  t.ok(drains > 0, "reading it asks the session to go on");
  t.equal(s.getBufferedAmount(), 0);
  while (status !== 2) status = s.send(big);
  t.equal(s.closed, true, "a client that reads nothing past MAX_BUFFER is cut");
  t.ok(MAX_BUFFER > HIGH_WATER);
  const errored = await new Promise<boolean>((resolve) => {
    s.body.on("error", () => resolve(true));
    s.body.on("close", () => resolve(false));
  });
  t.equal(errored, true, "the body errors, so the HTTP layer cuts the connection");
  t.equal(closes, 1, "the session is told once");
});
