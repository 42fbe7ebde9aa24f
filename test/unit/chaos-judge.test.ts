// The chaos suite's verdicts (test/chaos/tracker.ts, traffic.ts) on made-up traffic: what it must count as stuck,
// as a hang and as a duplicate, so a run that passes means what it says; and its senders' retries with their
// Idempotency-Key against a stand-in server.
import { once } from "node:events";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import t from "tap";
import { WebSocketServer } from "ws";
import {
  ACK_RECOVERY_MS,
  judge,
  LOG_LINE_BUDGET,
  type LogLine,
  MAX_REDELIVERIES_PER_S,
  type MessageRecord,
  STUCK_MS,
  Tracker,
} from "../chaos/tracker.ts";
import { errorStatus, startPoller, startSender, startWsReceiver } from "../chaos/traffic.ts";
import { until } from "../helpers/wait.ts";

const T0 = 1_800_000_000_000;
const phases = { injectAt: T0 + 1_000, endAt: T0 + 2_000 };

t.test(
  "a send committed without an answer (its node died before the append) must still arrive within 10 s",
  async (t) => {
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
    const r = judge(tr2, { description: "d", strandsSends: true }, phases, {
      committed: new Set([fine.tag]),
      unacked: new Set(),
    });
    t.equal(r.stuck, 0, "delivered within 10 s: not stuck");
    t.equal(r.no201Committed, 1);
    t.equal(r.no201CommittedLatest, 5.9, "how long it took is reported");
  },
);

t.test("a fault meant to strand sends fails when none was stranded", async (t) => {
  const tr = new Tracker("f");
  const ok = tr.sent(tr.newTag(0, 0), "r", T0);
  Object.assign(ok, { status: "201", answeredAt: T0 + 5 });
  tr.delivered(ok.tag, { at: T0 + 10, fetchSeq: tr.mark(), via: "poll" });
  const r = judge(tr, { description: "d", strandsSends: true }, phases, {
    committed: new Set([ok.tag]),
    unacked: new Set(),
  });
  t.match(r.failures.join(";"), /position check was not exercised/);
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
  t.equal(
    errorStatus(new Error("Opening handshake has timed out")),
    "timeout",
    "a WebSocket handshake past 5 s is a hang",
  );
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
  const actors = [
    startWsReceiver(tr, `http://127.0.0.1:${port(wss)}`, me),
    startPoller(tr, `http://127.0.0.1:${port(http)}`, me),
  ];
  try {
    await until(() => ws.deliveries.length >= 2 && poll.deliveries.length >= 2, {
      ms: 10_000,
      every: 10,
      what: "each message handed out twice",
    });
  } finally {
    await Promise.all(actors.map((a) => a.stop()));
  }
  t.equal(ws.afterAck, 1, "WebSocket: the frame after the ack's reply");
  t.equal(poll.afterAck, 1, "long poll: the poll started after the 204");
});

t.test(
  "a send committed by an attempt that got no 201 must end with a 201 naming it, from a retry with its key, and arrive once",
  async (t) => {
    const tr = new Tracker("f");
    const m = tr.sent(tr.newTag(0, 0), "r", T0);
    // the node died between the commit and the answer; the retries found its node restarting, then the key still
    // held, then got the first answer back
    m.attempts.push(
      { startedAt: T0, endedAt: T0 + 300, status: "UND_ERR_SOCKET" },
      { startedAt: T0 + 600, endedAt: T0 + 601, status: "ECONNREFUSED" },
      { startedAt: T0 + 1_500, endedAt: T0 + 1_510, status: "409" },
      { startedAt: T0 + 14_000, endedAt: T0 + 14_020, status: "201", replayed: true },
    );
    Object.assign(m, { status: "201", answeredAt: T0 + 14_020, id: "msg_5" });
    tr.delivered(m.tag, { at: T0 + 9_000, id: "msg_5", fetchSeq: tr.mark(), via: "poll" });
    const durable = { committed: new Set([m.tag]), unacked: new Set<string>(), createdAt: new Map([[m.tag, T0 + 5]]) };
    const r = judge(tr, { description: "d", strandsSends: true }, phases, durable);
    t.same(r.failures, [], "committed by its first attempt, answered by a replay, delivered once");
    t.equal(r.no201Committed, 1, "it counts as committed without a 201 (the attempt that made it got none)");
    t.equal(r.no201Unresolved, 0);
    t.equal(r.retried, 1);
    t.equal(r.replayed, 1);
    t.equal(r.duplicates, 0);
    t.equal(r.no201CommittedLatest, 8.7, "measured from the answer of the attempt that made it");

    // the same, delivered 10 s after that attempt's answer: stuck, although within 10 s of the final 201
    const late = new Tracker("g");
    const l = late.sent(late.newTag(0, 0), "r", T0);
    l.attempts.push(...m.attempts);
    Object.assign(l, { status: "201", answeredAt: T0 + 14_020, id: "msg_5" });
    late.delivered(l.tag, { at: T0 + 300 + STUCK_MS + 1, id: "msg_5", fetchSeq: late.mark(), via: "poll" });
    t.equal(
      judge(late, { description: "d" }, phases, {
        ...durable,
        committed: new Set([l.tag]),
        createdAt: new Map([[l.tag, T0 + 5]]),
      }).stuck,
      1,
    );

    // retries that never got their 201 (the key still held when they gave up)
    const gaveUp = new Tracker("h");
    const g = gaveUp.sent(gaveUp.newTag(0, 0), "r", T0);
    g.attempts.push(
      { startedAt: T0, endedAt: T0 + 300, status: "ECONNRESET" },
      { startedAt: T0 + 1_000, endedAt: T0 + 1_010, status: "409" },
    );
    Object.assign(g, { status: "409", answeredAt: T0 + 1_010 });
    gaveUp.delivered(g.tag, { at: T0 + 2_000, id: "msg_6", fetchSeq: gaveUp.mark(), via: "ws" });
    const u = judge(gaveUp, { description: "d" }, phases, {
      committed: new Set([g.tag]),
      unacked: new Set(),
      createdAt: new Map([[g.tag, T0 + 5]]),
    });
    t.equal(u.no201Unresolved, 1);
    t.equal(u.no201Delivered, 1);
    t.match(u.failures.join(";"), /no retry with its key got the 201 naming it: 1/);
    t.match(u.worst.join("\n"), /ECONNRESET → 409/);

    // a retry whose 201 names another message than the one delivered
    const other = new Tracker("i");
    const o = other.sent(other.newTag(0, 0), "r", T0);
    o.attempts.push(
      { startedAt: T0, endedAt: T0 + 300, status: "503" },
      { startedAt: T0 + 1_000, endedAt: T0 + 1_010, status: "201" },
    );
    Object.assign(o, { status: "201", answeredAt: T0 + 1_010, id: "msg_8" });
    other.delivered(o.tag, { at: T0 + 1_100, id: "msg_7", fetchSeq: other.mark(), via: "poll" });
    const w = judge(other, { description: "d" }, phases, {
      committed: new Set([o.tag]),
      unacked: new Set(),
      createdAt: new Map([[o.tag, T0 + 5]]),
    });
    t.equal(w.no201Unresolved, 1, "answered msg_8, delivered msg_7");
  },
);

t.test(
  "a send whose first attempt stored nothing is not an orphan: its retry made it, and its deadline runs from that answer",
  async (t) => {
    const tr = new Tracker("f");
    const m = tr.sent(tr.newTag(0, 0), "r", T0);
    m.attempts.push(
      { startedAt: T0, endedAt: T0 + 50, status: "503" },
      { startedAt: T0 + 11_000, endedAt: T0 + 11_040, status: "201" },
    );
    Object.assign(m, { status: "201", answeredAt: T0 + 11_040, id: "msg_1" });
    tr.delivered(m.tag, { at: T0 + 11_100, id: "msg_1", fetchSeq: tr.mark(), via: "ws" });
    const r = judge(tr, { description: "d" }, phases, {
      committed: new Set([m.tag]),
      unacked: new Set(),
      createdAt: new Map([[m.tag, T0 + 11_010]]),
    });
    t.equal(r.no201Committed, 0);
    t.equal(r.stuck, 0, "delivered 60 ms after the 201 of the attempt that made it (11 s after the first 503)");
    t.equal(r.retried, 1);
    t.equal(r.replayed, 0);
    t.same(r.failures, []);
  },
);

t.test("duplicates: a body stored twice, or delivered under two ids; a redelivery of one id is none", async (t) => {
  const tr = new Tracker("f");
  const again = tr.sent(tr.newTag(0, 0), "r", T0);
  Object.assign(again, { status: "201", answeredAt: T0 + 5, id: "msg_1" });
  tr.delivered(again.tag, { at: T0 + 10, id: "msg_1", fetchSeq: tr.mark(), via: "poll" });
  tr.delivered(again.tag, { at: T0 + 20, id: "msg_1", fetchSeq: tr.mark(), via: "poll" });
  const twice = tr.sent(tr.newTag(0, 1), "r", T0);
  Object.assign(twice, { status: "201", answeredAt: T0 + 5, id: "msg_2" });
  tr.delivered(twice.tag, { at: T0 + 10, id: "msg_2", fetchSeq: tr.mark(), via: "ws" });
  tr.delivered(twice.tag, { at: T0 + 20, id: "msg_3", fetchSeq: tr.mark(), via: "ws" });
  const stored = tr.sent(tr.newTag(0, 2), "r", T0);
  Object.assign(stored, { status: "201", answeredAt: T0 + 5, id: "msg_4" });
  tr.delivered(stored.tag, { at: T0 + 10, id: "msg_4", fetchSeq: tr.mark(), via: "poll" });
  const committed = new Set([again.tag, twice.tag, stored.tag]);

  const r = judge(tr, { description: "d" }, phases, {
    committed,
    unacked: new Set(),
    copies: new Map([[stored.tag, 2]]),
  });
  t.equal(r.redelivered, 2, "delivered more than once: the redelivery and the duplicate");
  t.equal(r.duplicates, 2, "msg_2 and msg_3 for one body; one body stored twice");
  t.match(r.failures.join(";"), /duplicates 2/);
  t.match(r.worst.join("\n"), /duplicate: "chaos f s0 #1" stored 1×, delivered as msg_2, msg_3/);
  t.equal(
    judge(tr, { description: "d" }, phases, { committed, unacked: new Set() }).duplicates,
    1,
    "without Postgres's copies",
  );
});

// The sender against a stand-in server (real sockets): one key per send, the same on every attempt, each attempt kept.
t.test("a sender retries a send that got no answer with the same Idempotency-Key until its 201", async (t) => {
  const tr = new Tracker("f");
  const seen: { key: string | undefined; body: string }[] = [];
  const http = createServer((req, res) => {
    let body = "";
    req.on("data", (d: Buffer) => (body += d.toString()));
    req.on("end", () => {
      const key = req.headers["idempotency-key"] as string | undefined;
      const n = seen.filter((s) => s.key === key).length;
      seen.push({ key, body });
      if (n === 0) return void req.socket.destroy(); // the node died before answering
      if (n === 1) {
        res.writeHead(409, { "content-type": "application/json", "retry-after": "0" });
        return void res.end(
          JSON.stringify({ error: "conflict", message: "a request with this Idempotency-Key is still running" }),
        );
      }
      const sent = JSON.parse(body) as { to: string; body: string };
      res.writeHead(201, { "content-type": "application/json", "idempotency-replayed": "true" });
      res.end(JSON.stringify({ id: "msg_9", thread_id: "thread_1", to: sent.to, body: sent.body }));
    });
  });
  http.listen(0, "127.0.0.1");
  await once(http, "listening");
  t.teardown(() => http.close());
  const url = `http://127.0.0.1:${(http.address() as AddressInfo).port}`;
  const sender = startSender(tr, url, { id: "s", token: "am_s" }, { id: "r", token: "am_r" }, 0, 2, undefined, 1);
  try {
    await until(() => [...tr.messages.values()][0]?.status !== undefined, {
      ms: 10_000,
      every: 10,
      what: "the first send to end",
    });
  } finally {
    await sender.stop();
  }
  const first = [...tr.messages.values()][0]!;
  t.equal(first.status, "201");
  t.equal(first.id, "msg_9");
  t.same(
    first.attempts.map((a) => a.status),
    ["UND_ERR_SOCKET", "409", "201"],
  );
  t.equal(first.attempts[2]!.replayed, true);
  const mine = seen.filter((s) => s.key === first.key);
  t.equal(mine.length, 3, "three attempts with its key");
  t.match(first.key, /^[A-Za-z0-9_-]{22}$/);
  t.ok(
    mine.every((s) => s.body === mine[0]!.body),
    "the same request each time",
  );
  t.equal(new Set(seen.map((s) => s.key)).size, tr.messages.size, "one key per send");
  t.same(
    tr.requests
      .filter((r) => r.kind === "send")
      .slice(0, 3)
      .map((r) => r.status),
    ["UND_ERR_SOCKET", "409", "201"],
  );
});

// --- issue 38's cases ----------------------------------------------------------------------------------------

/** A tracker with one message answered 201, delivered and acked: a clean run to add one case to. */
function oneGood(acked = true): {
  tr: Tracker;
  m: MessageRecord;
  durable: { committed: Set<string>; unacked: Set<string> };
} {
  const tr = new Tracker("f");
  const m = tr.sent(tr.newTag(0, 0), "r", T0);
  Object.assign(m, { status: "201", answeredAt: T0 + 5, id: "msg_1" });
  tr.delivered(m.tag, { at: T0 + 10, id: "msg_1", fetchSeq: tr.mark(), via: "poll" });
  if (acked) tr.ackConfirmed(m, T0 + 12);
  return { tr, m, durable: { committed: new Set([m.tag]), unacked: new Set() } };
}

t.test(
  "503 but committed: a plain 503 for the attempt that stored the message fails; `stored: unknown` does not",
  async (t) => {
    const tr = new Tracker("f");
    const lie = tr.sent(tr.newTag(0, 0), "r", T0);
    lie.attempts.push(
      { startedAt: T0, endedAt: T0 + 40, status: "503" },
      { startedAt: T0 + 300, endedAt: T0 + 310, status: "201", replayed: true },
    );
    Object.assign(lie, { status: "201", answeredAt: T0 + 310, id: "msg_1" });
    tr.delivered(lie.tag, { at: T0 + 400, id: "msg_1", fetchSeq: tr.mark(), via: "poll" });
    const honest = tr.sent(tr.newTag(0, 1), "r", T0);
    honest.attempts.push(
      { startedAt: T0, endedAt: T0 + 40, status: "503", storedUnknown: true },
      { startedAt: T0 + 300, endedAt: T0 + 310, status: "201", replayed: true },
    );
    Object.assign(honest, { status: "201", answeredAt: T0 + 310, id: "msg_2" });
    tr.delivered(honest.tag, { at: T0 + 400, id: "msg_2", fetchSeq: tr.mark(), via: "ws" });
    // refused, then stored by its retry: the 503 was true
    const retried = tr.sent(tr.newTag(0, 2), "r", T0);
    retried.attempts.push(
      { startedAt: T0, endedAt: T0 + 40, status: "503" },
      { startedAt: T0 + 300, endedAt: T0 + 310, status: "201" },
    );
    Object.assign(retried, { status: "201", answeredAt: T0 + 310, id: "msg_3" });
    tr.delivered(retried.tag, { at: T0 + 400, id: "msg_3", fetchSeq: tr.mark(), via: "poll" });
    const createdAt = new Map([
      [lie.tag, T0 + 20],
      [honest.tag, T0 + 20],
      [retried.tag, T0 + 305],
    ]);
    const r = judge(tr, { description: "d" }, phases, {
      committed: new Set(createdAt.keys()),
      unacked: new Set(),
      createdAt,
    });
    t.equal(r.committed503, 1, "only the plain 503 whose attempt stored it");
    t.equal(r.unknown503, 1);
    t.match(r.failures.join(";"), /503 but committed 1/);
    t.match(r.worst.join("\n"), /503 but committed: "chaos f s0 #0" attempts 503 → 201 \(replayed\)/);
    t.equal(r.no201Unresolved, 0, "(each still ended with the 201 naming it)");
  },
);

t.test(`a refused ack must be acknowledged within ${ACK_RECOVERY_MS / 1000} s of the backend's recovery`, async (t) => {
  const at = (ms: number | undefined) => {
    const { tr, m, durable } = oneGood(false);
    tr.ackRefused(m, T0 + 1_200);
    tr.ackRefused(m, T0 + 1_700); // the first refusal is kept
    if (ms !== undefined) tr.ackConfirmed(m, ms);
    return { tr, m, durable };
  };
  const fast = at(phases.endAt + 1_900);
  const r = judge(fast.tr, { description: "d" }, phases, fast.durable);
  t.equal(fast.m.ackRefusedAt, T0 + 1_200);
  t.equal(r.refusedAcks, 1);
  t.equal(r.refusedAcksLate, 0);
  t.equal(r.refusedAckSlowest, 1.9, "measured from the fault's end");
  t.same(r.failures, []);

  const slow = at(phases.endAt + 2_100);
  const s = judge(slow.tr, { description: "d" }, phases, slow.durable);
  t.equal(s.refusedAcksLate, 1);
  t.match(s.failures.join(";"), /refused acks not acknowledged within 2 s of recovery: 1 of 1/);
  t.match(s.worst.join("\n"), /refused ack: "chaos f s0 #0" \(via poll\) acknowledged 2\.1 s after recovery/);

  const early = at(phases.endAt - 500);
  t.equal(
    judge(early.tr, { description: "d" }, phases, early.durable).refusedAckSlowest,
    0,
    "acknowledged before the fault's end: 0",
  );

  const never = at(undefined);
  const n = judge(never.tr, { description: "d" }, phases, { ...never.durable, unacked: new Set(["1"]) });
  t.equal(n.refusedAcksLate, 1, "never acknowledged (Postgres still counts it unacked)");
  t.match(n.worst.join("\n"), /never acknowledged/);
  const unconfirmed = judge(never.tr, { description: "d" }, phases, never.durable);
  t.equal(
    unconfirmed.refusedAcksLate,
    0,
    "acknowledged in Postgres though never confirmed: its time is unknown, not judged",
  );
  t.equal(unconfirmed.refusedAcksUnconfirmed, 1);

  // refused well after the fault's end: measured from the refusal
  const later = at(undefined);
  later.m.ackRefusedAt = phases.endAt + 10_000;
  later.tr.ackConfirmed(later.m, phases.endAt + 11_000);
  t.equal(judge(later.tr, { description: "d" }, phases, later.durable).refusedAckSlowest, 1);
});

t.test(`at most ${MAX_REDELIVERIES_PER_S} hand-outs again per second of one message, over any 5 s`, async (t) => {
  // the node's backoff while acks fail: 1 s, 2 s, 4 s, 8 s
  const { tr, m, durable } = oneGood(false);
  for (const dt of [1_000, 3_000, 7_000, 15_000])
    tr.delivered(m.tag, { at: T0 + 10 + dt, id: "msg_1", fetchSeq: tr.mark(), via: "poll" });
  const r = judge(tr, { description: "d" }, phases, durable);
  t.equal(r.redeliveryRate, 0.4, "three hand-outs within 5 s (at 0, 1 and 3 s): two again, 0.4/s");
  t.equal(r.hotLoops, 0);
  t.same(r.failures, []);

  // issue 38: 308 hand-outs in 15 s
  const hot = oneGood(false);
  for (let i = 1; i < 308; i++)
    hot.tr.delivered(hot.m.tag, { at: T0 + 10 + i * 49, id: "msg_1", fetchSeq: hot.tr.mark(), via: "poll" });
  const h = judge(hot.tr, { description: "d" }, phases, hot.durable);
  t.ok(h.redeliveryRate > 20, `${h.redeliveryRate}/s`);
  t.equal(h.hotLoops, 1);
  t.match(h.failures.join(";"), /handed out again more than 3\/s: 1 messages \(hot loop\)/);
  t.match(h.worst.join("\n"), /hot loop: "chaos f s0 #0" handed out 308×/);

  // 16 hand-outs in 5 s is 3/s again: the limit itself passes; one more fails
  const edge = oneGood(false);
  for (let i = 1; i < 16; i++)
    edge.tr.delivered(edge.m.tag, { at: T0 + 10 + i * 300, id: "msg_1", fetchSeq: edge.tr.mark(), via: "ws" });
  t.equal(judge(edge.tr, { description: "d" }, phases, edge.durable).hotLoops, 0);
  edge.tr.delivered(edge.m.tag, { at: T0 + 10 + 16 * 300, id: "msg_1", fetchSeq: edge.tr.mark(), via: "ws" });
  t.equal(judge(edge.tr, { description: "d" }, phases, edge.durable).hotLoops, 1);
});

t.test("requests reset during a graceful shutdown are counted and fail the run", async (t) => {
  const { tr, durable } = oneGood();
  tr.requests.push(
    {
      kind: "send",
      startedAt: phases.injectAt + 5,
      endedAt: phases.injectAt + 20,
      status: "UND_ERR_SOCKET",
      allowanceMs: 0,
    },
    {
      kind: "poll",
      startedAt: phases.injectAt - 1_000,
      endedAt: phases.injectAt + 30,
      status: "ECONNRESET",
      allowanceMs: 2_000,
    },
    {
      kind: "send",
      startedAt: phases.injectAt + 40,
      endedAt: phases.injectAt + 41,
      status: "ECONNREFUSED",
      allowanceMs: 0,
    },
    { kind: "send", startedAt: phases.injectAt + 40, endedAt: phases.injectAt + 41, status: "503", allowanceMs: 0 },
    { kind: "send", startedAt: T0, endedAt: T0 + 10, status: "ECONNRESET", allowanceMs: 0 }, // before the signal
    { kind: "ws-close", startedAt: T0, endedAt: phases.injectAt + 30, status: "close-1006", allowanceMs: Infinity },
  );
  const r = judge(tr, { description: "d", graceful: true }, phases, durable);
  t.equal(r.resets, 2, "a send and a long poll reset; a refused connection, a 503 and a closed socket are not resets");
  t.equal(
    r.failures.some((f) => /requests reset during SIGTERM: 2/.test(f)),
    true,
  );
  t.match(r.worst.join("\n"), /reset during SIGTERM: send×1, poll×1/);
  const kill = judge(tr, { description: "d" }, phases, durable);
  t.equal(kill.resets, null, "not a graceful fault: not counted");
  t.same(kill.failures, []);
});

t.test(`a fault may log at most ${LOG_LINE_BUDGET} lines on its nodes`, async (t) => {
  const { tr, durable } = oneGood();
  const lines = (n: number): LogLine[] =>
    Array.from({ length: n }, (_, i) => ({
      node: "sending",
      level: 40,
      msg: i % 2 ? "postgres unavailable" : "circuit open",
    }));
  const ok = judge(tr, { description: "d" }, phases, durable, lines(LOG_LINE_BUDGET));
  t.equal(ok.logLines, LOG_LINE_BUDGET);
  t.same(ok.failures, []);
  const over = judge(tr, { description: "d" }, phases, durable, lines(LOG_LINE_BUDGET + 1));
  t.match(over.failures.join(";"), /node log lines 51 over the budget of 50/);
  t.match(over.worst.join("\n"), /log lines: 26× sending: circuit open; 25× sending: postgres unavailable/);
  t.equal(judge(tr, { description: "d" }, phases, durable).logLines, null, "not counted");
});

// The receivers' retries of refused acks against stand-in servers (real sockets).
t.test("a long poller retries a refused ack with backoff, and goes on polling meanwhile", async (t) => {
  const tr = new Tracker("f");
  const m = tr.sent(tr.newTag(0, 0), "r", Date.now());
  let acks = 0;
  let polls = 0;
  const http = createServer((req, res) => {
    if (req.method === "POST") {
      acks++;
      if (acks <= 3)
        return void res.writeHead(503, { "retry-after": "1" }).end(JSON.stringify({ error: "unavailable" }));
      return void res.writeHead(204).end();
    }
    polls++;
    const messages = polls === 1 ? [{ id: "msg_1", body: m.tag }] : [];
    setTimeout(() => res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify({ messages })), 50);
  });
  http.listen(0, "127.0.0.1");
  await once(http, "listening");
  t.teardown(() => http.close());
  const poller = startPoller(tr, `http://127.0.0.1:${(http.address() as AddressInfo).port}`, {
    id: "r",
    token: "am_x",
  });
  try {
    await until(() => m.ackConfirmedAt !== undefined, { ms: 10_000, every: 10, what: "the ack to take" });
  } finally {
    await poller.stop();
  }
  t.same(
    tr.requests.filter((r) => r.kind === "ack").map((r) => r.status),
    ["503", "503", "503", "204"],
  );
  t.ok(
    m.ackRefusedAt !== undefined && m.ackConfirmedAt! - m.ackRefusedAt >= 250 + 500 + 1_000 - 50,
    "250 ms, 500 ms, 1 s apart",
  );
  t.ok(polls > 3, `polled on meanwhile (${polls} polls)`);
});

t.test(
  "a WebSocket receiver leaves an ack refused as unavailable to the node, which confirms its ref later",
  async (t) => {
    const tr = new Tracker("f");
    const m = tr.sent(tr.newTag(0, 0), "r", Date.now());
    const acked: string[] = [];
    const wss = new WebSocketServer({ port: 0, host: "127.0.0.1" });
    wss.on("connection", (sock) => {
      sock.send(JSON.stringify({ type: "ready" }));
      sock.send(JSON.stringify({ type: "message", message: { id: "msg_1", body: m.tag } }));
      sock.on("message", (data) => {
        const f = JSON.parse(data.toString()) as { type: string; id: string; ref: string };
        if (f.type !== "ack") return;
        acked.push(f.ref);
        sock.send(
          JSON.stringify({ type: "error", error: "unavailable", message: "Postgres is unavailable", ref: f.ref }),
        );
        // the node's own retry takes 600 ms later, on this socket
        setTimeout(() => sock.send(JSON.stringify({ type: "ack", id: f.id, ref: f.ref })), 600);
      });
    });
    await once(wss, "listening");
    t.teardown(() => wss.close());
    const ws = startWsReceiver(tr, `http://127.0.0.1:${(wss.address() as AddressInfo).port}`, {
      id: "r",
      token: "am_x",
    });
    try {
      await until(() => m.ackConfirmedAt !== undefined, { ms: 10_000, every: 10, what: "the node's ack frame" });
    } finally {
      await ws.stop();
    }
    t.equal(acked.length, 1, "acked once: the node retried it");
    t.ok(m.ackRefusedAt !== undefined && m.ackConfirmedAt! - m.ackRefusedAt >= 550);
    t.same(
      tr.requests.filter((r) => r.kind.startsWith("ws-ack")).map((r) => `${r.kind} ${r.status}`),
      ["ws-ack ws-unavailable", "ws-ack-retried ok"],
    );
    const r = judge(
      tr,
      { description: "d" },
      { injectAt: m.sentAt, endAt: m.ackRefusedAt! },
      { committed: new Set([m.tag]), unacked: new Set() },
    );
    t.equal(r.refusedAcks, 1);
    t.equal(r.refusedAcksLate, 0);
  },
);

t.test("a sender keeps a 503's `stored: unknown`", async (t) => {
  const tr = new Tracker("f");
  let n = 0;
  const http = createServer((req, res) => {
    req.resume();
    req.on("end", () => {
      if (n++ === 0) {
        res.writeHead(503, { "content-type": "application/json", "retry-after": "0" });
        return void res.end(
          JSON.stringify({ error: "unavailable", message: "may have been stored", retry_after: 0, stored: "unknown" }),
        );
      }
      res.writeHead(201, { "content-type": "application/json", "idempotency-replayed": "true" });
      res.end(JSON.stringify({ id: "msg_9", thread_id: "thread_1", to: "r", body: "x" }));
    });
  });
  http.listen(0, "127.0.0.1");
  await once(http, "listening");
  t.teardown(() => http.close());
  const sender = startSender(
    tr,
    `http://127.0.0.1:${(http.address() as AddressInfo).port}`,
    { id: "s", token: "am_s" },
    { id: "r", token: "am_r" },
    0,
    2,
    undefined,
    1,
  );
  try {
    await until(() => [...tr.messages.values()][0]?.status !== undefined, {
      ms: 10_000,
      every: 10,
      what: "the first send to end",
    });
  } finally {
    await sender.stop();
  }
  const first = [...tr.messages.values()][0]!;
  t.same(
    first.attempts.map((a) => [a.status, a.storedUnknown === true]),
    [
      ["503", true],
      ["201", false],
    ],
  );
});
