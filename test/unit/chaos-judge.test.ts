// The chaos suite's verdicts (test/chaos/tracker.ts, traffic.ts) on made-up traffic: what it must count as stuck
// and as a hang, so a run that passes means what it says.
import { once } from "node:events";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import t from "tap";
import { WebSocketServer } from "ws";
import { judge, STUCK_MS, Tracker } from "../chaos/tracker.ts";
import { errorStatus, startPoller, startWsReceiver } from "../chaos/traffic.ts";
import { until } from "../helpers/wait.ts";

const T0 = 1_800_000_000_000;
const phases = { injectAt: T0 + 1_000, endAt: T0 + 2_000 };

t.test("a send committed without an answer (its node died before the append) must still arrive within 10 s", async (t) => {
  const tr = new Tracker("f");
  const ok = tr.sent(tr.newTag(0, 0), "r", T0);
  Object.assign(ok, { status: "201", answeredAt: T0 + 5, id: "msg_1" });
  tr.delivered(ok.tag, { at: T0 + 10, fetchSeq: tr.mark(), via: "poll" });
  tr.ackConfirmed(ok, T0 + 12);
  const orphan = tr.sent(tr.newTag(0, 1), "r", T0 + 1_000);
  Object.assign(orphan, { status: "ECONNRESET", answeredAt: T0 + 1_100 });

  const committed = new Set([ok.tag, orphan.tag]);
  t.notOk(tr.drained(T0 + 1_200, committed), "the drain waits for it");
  t.ok(tr.drained(T0 + 1_200), "(without Postgres's word, only 201s are waited for)");

  const never = judge(tr, { description: "d" }, phases, { committed, unacked: new Set() });
  t.equal(never.stuck, 1, "never delivered: stuck");
  t.match(never.failures.join(";"), /stuck 1/);

  tr.delivered(orphan.tag, { at: T0 + 1_100 + STUCK_MS + 1, fetchSeq: tr.mark(), via: "ws" });
  t.equal(judge(tr, { description: "d" }, phases, { committed, unacked: new Set() }).stuck, 1, "late: stuck");

  const tr2 = new Tracker("g");
  const fine = tr2.sent(tr2.newTag(0, 0), "r", T0);
  Object.assign(fine, { status: "UND_ERR_SOCKET", answeredAt: T0 + 100 });
  tr2.delivered(fine.tag, { at: T0 + 6_000, fetchSeq: tr2.mark(), via: "poll" });
  const r = judge(tr2, { description: "d", strandsSends: true }, phases, { committed: new Set([fine.tag]), unacked: new Set() });
  t.equal(r.stuck, 0, "delivered within 10 s: not stuck");
  t.equal(r.no201Committed, 1);
  t.equal(r.no201CommittedLatest, 5.9, "how long it took is reported");
});

t.test("a fault meant to strand sends fails when none was stranded", async (t) => {
  const tr = new Tracker("f");
  const ok = tr.sent(tr.newTag(0, 0), "r", T0);
  Object.assign(ok, { status: "201", answeredAt: T0 + 5 });
  tr.delivered(ok.tag, { at: T0 + 10, fetchSeq: tr.mark(), via: "poll" });
  const r = judge(tr, { description: "d", strandsSends: true }, phases, { committed: new Set([ok.tag]), unacked: new Set() });
  t.match(r.failures.join(";"), /reconciler was not exercised/);
  t.same(judge(tr, { description: "d" }, phases, { committed: new Set([ok.tag]), unacked: new Set() }).failures, []);
});

t.test("a fault meant to meet acks fails unless acks on both transports were answered unavailable", async (t) => {
  const tr = new Tracker("f");
  const ok = tr.sent(tr.newTag(0, 0), "r", T0);
  Object.assign(ok, { status: "201", answeredAt: T0 + 5 });
  tr.delivered(ok.tag, { at: T0 + 10, fetchSeq: tr.mark(), via: "poll" });
  const durable = { committed: new Set([ok.tag]), unacked: new Set<string>() };
  tr.requests.push({ kind: "ack", startedAt: T0, endedAt: T0 + 5, status: "503", allowanceMs: 0 });
  t.match(judge(tr, { description: "d", meetsAcks: true }, phases, durable).failures.join(";"), /no WebSocket ack met/);
  tr.requests.push({ kind: "ws-ack", startedAt: T0, endedAt: T0 + 5, status: "ws-unavailable", allowanceMs: 0 });
  t.same(judge(tr, { description: "d", meetsAcks: true }, phases, durable).failures, []);
});

t.test("hangs and 5xx", async (t) => {
  t.equal(errorStatus(new Error("Opening handshake has timed out")), "timeout", "a WebSocket handshake past 5 s is a hang");
  t.equal(errorStatus(new DOMException("The operation was aborted due to timeout", "TimeoutError")), "timeout");
  const tr = new Tracker("f");
  const ok = tr.sent(tr.newTag(0, 0), "r", T0);
  Object.assign(ok, { status: "201", answeredAt: T0 + 5 });
  tr.delivered(ok.tag, { at: T0 + 10, fetchSeq: tr.mark(), via: "poll" });
  tr.requests.push(
    { kind: "send", startedAt: T0, endedAt: T0 + 10, status: "503", allowanceMs: 0 },
    { kind: "send", startedAt: T0, endedAt: T0 + 10, status: "500", allowanceMs: 0 },
    { kind: "send", startedAt: T0, endedAt: T0 + 10, status: "502", allowanceMs: 0 },
    { kind: "ws-connect", startedAt: T0, endedAt: T0 + 10, status: "timeout", allowanceMs: 0 },
    { kind: "poll", startedAt: T0, endedAt: T0 + 6_900, status: "200", allowanceMs: 2_000 },
    { kind: "poll", startedAt: T0, endedAt: T0 + 7_100, status: "200", allowanceMs: 2_000 },
    { kind: "ws-close", startedAt: T0, endedAt: T0 + 60_000, status: "close-1006", allowanceMs: Infinity },
    { kind: "ws-close", startedAt: T0, endedAt: T0 + 60_000, status: "close-4401", allowanceMs: Infinity },
  );
  const r = judge(tr, { description: "d" }, phases, { committed: new Set([ok.tag]), unacked: new Set() });
  t.equal(r.bad5xx, 3, "500, 502 and a valid token's 4401 close count; 503 and a dead node's 1006 do not");
  t.equal(r.hangs, 2, "a timed-out handshake and a long poll 5 s past its wait; a long session is none");
});

// The receivers against stand-in servers (real sockets) that hand a message out again right after confirming its ack.
t.test("a message handed out again after its ack's confirmation counts, on either transport", async (t) => {
  const tr = new Tracker("f");
  const ws = tr.sent(tr.newTag(0, 0), "r", Date.now());
  const poll = tr.sent(tr.newTag(0, 1), "r", Date.now());
  const frame = (body: string) => JSON.stringify({ type: "message", message: { id: `msg_${body.length}`, body } });

  const wss = new WebSocketServer({ port: 0, host: "127.0.0.1" });
  wss.on("connection", (sock) => {
    sock.send(JSON.stringify({ type: "ready" }));
    sock.send(frame(ws.tag));
    sock.on("message", (data) => {
      const f = JSON.parse(data.toString()) as { type: string; ref: string };
      if (f.type !== "ack") return;
      sock.send(JSON.stringify({ type: "ack", ref: f.ref }));
      if (ws.deliveries.length === 1) sock.send(frame(ws.tag)); // once more, on the same connection, after the confirmation
    });
  });
  await once(wss, "listening");
  let polls = 0;
  const http = createServer((req, res) => {
    if (req.method === "POST") return void res.writeHead(204).end();
    polls++;
    const messages = polls <= 2 ? [{ id: "msg_1", body: poll.tag }] : [];
    res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify({ messages }));
  });
  http.listen(0, "127.0.0.1");
  await once(http, "listening");
  t.teardown(() => {
    wss.close();
    http.close();
  });
  const port = (s: { address(): unknown }) => (s.address() as AddressInfo).port;
  const me = { id: "r", token: "am_x" };
  const actors = [startWsReceiver(tr, `http://127.0.0.1:${port(wss)}`, me), startPoller(tr, `http://127.0.0.1:${port(http)}`, me)];
  try {
    await until(() => ws.deliveries.length >= 2 && poll.deliveries.length >= 2, { ms: 10_000, every: 10, what: "each message handed out twice" });
  } finally {
    await Promise.all(actors.map((a) => a.stop()));
  }
  t.equal(ws.afterAck, 1, "WebSocket: the frame after the ack's reply");
  t.equal(poll.afterAck, 1, "long poll: the poll started after the 204");
});
