import t from "tap";
import { call, registerAgent } from "./helpers/http.ts";
import { startTestNode } from "./helpers/node.ts";
import { ack, pending, send, sendOk } from "./messaging-helpers.ts";
import { until } from "./helpers/wait.ts";

for (const engine of ["redis", "memory"] as const) {
  t.test(`direct messages over HTTP (${engine} engines, real Postgres)`, async (t) => {
    const node = await startTestNode(t, { engine });
    const base = node.url;
    const hub = node.svc.hub;

    t.test("send answers 201 with exactly the message", async (t) => {
      const a = await registerAgent(base, "Alice");
      const b = await registerAgent(base, "Bob");
      const r = await send(base, a, b.id, "hi Bob");
      t.equal(r.status, 201);
      t.match(r.headers.get("content-type"), /application\/json/);
      t.same(Object.keys(r.body).sort(), ["body", "created_at", "from", "id", "thread_id", "to"]);
      t.match(r.body.id, /^msg_[0-9]+$/);
      t.match(r.body.thread_id, /^thread_[0-9]+$/);
      t.same(r.body.from, { id: a.id, display_name: "Alice", avatar_url: null });
      t.equal(r.body.to, b.id);
      t.equal(r.body.body, "hi Bob");
      t.ok(!Number.isNaN(Date.parse(r.body.created_at)));
      const rows = await node.svc.sql`select body from messages where id = ${r.body.id.slice(4)}`;
      t.equal(rows[0]?.body, "hi Bob", "durable in Postgres once answered");
    });

    t.test("a lone surrogate becomes U+FFFD: the answer, the delivery and Postgres agree", async (t) => {
      const a = await registerAgent(base, "a");
      const b = await registerAgent(base, "b");
      const r = await send(base, a, b.id, "x\ud800y \udc00");
      t.equal(r.status, 201);
      t.equal(r.body.body, "x\ufffdy \ufffd", "answered");
      t.equal((await pending(base, b))[0]?.body, "x\ufffdy \ufffd", "delivered");
      const [row] = await node.svc.sql`select body from messages where id = ${r.body.id.slice(4)}`;
      t.equal(row?.body, "x\ufffdy \ufffd", "stored");
      t.equal(
        (await send(base, a, b.id, "\ud83d\ude00")).body.body,
        "\u{1f600}",
        "a paired surrogate is one character, kept",
      );
    });

    t.test("one direct thread per pair, whichever side starts", async (t) => {
      const a = await registerAgent(base, "a");
      const b = await registerAgent(base, "b");
      const c = await registerAgent(base, "c");
      const ab = await sendOk(base, a, b.id);
      const ba = await sendOk(base, b, a.id);
      const ac = await sendOk(base, a, c.id);
      t.equal(ba.thread_id, ab.thread_id);
      t.not(ac.thread_id, ab.thread_id);
      const again = await send(base, a, b.id, "same thread", { thread_id: ab.thread_id });
      t.equal(again.status, 201);
      t.equal(again.body.thread_id, ab.thread_id);
      const wrong = await send(base, a, b.id, "x", { thread_id: ac.thread_id });
      t.equal(wrong.status, 400, "own thread, other peer");
      t.equal(wrong.body.field, "thread_id");
      const foreign = await send(base, c, a.id, "x", { thread_id: ab.thread_id });
      t.equal(foreign.status, 404, "someone else's thread");
      const garbage = await send(base, a, b.id, "x", { thread_id: "nope" });
      t.equal(garbage.status, 404);
    });

    t.test("bad sends answer 400 or 404 in the error shape", async (t) => {
      const a = await registerAgent(base, "a");
      const b = await registerAgent(base, "b");
      const self = await send(base, a, a.id);
      t.equal(self.status, 400);
      t.equal(self.body.error, "invalid_request");
      t.equal(self.body.field, "to");
      const unknown = await send(base, a, "123456789");
      t.equal(unknown.status, 404);
      t.equal(unknown.body.error, "not_found");
      const badTo = await send(base, a, "bob");
      t.equal(badTo.status, 400);
      t.equal(badTo.body.field, "to");
      for (const body of ["", "   \n "]) {
        const r = await send(base, a, b.id, body);
        t.equal(r.status, 400, JSON.stringify(body));
        t.equal(r.body.field, "body");
      }
      t.equal((await send(base, a, b.id, "x".repeat(8000))).status, 201, "8,000 characters");
      t.equal((await send(base, a, b.id, "x".repeat(8001))).status, 400, "8,001 characters");
      t.equal((await send(base, a, b.id, "🌍".repeat(8000))).status, 201, "characters, not UTF-16 units");
      const noAuth = await call(base, "POST", "/v1/messages", { json: { to: b.id, body: "x" } });
      t.equal(noAuth.status, 401);
    });

    t.test("pending: unacked first with a growing delivery_count, then ack removes for good", async (t) => {
      const a = await registerAgent(base, "sender");
      const b = await registerAgent(base, "receiver");
      const m1 = await sendOk(base, a, b.id, "one");
      const m2 = await sendOk(base, a, b.id, "two");
      let got = await pending(base, b);
      t.same(
        got.map((m) => [m.id, m.delivery_count]),
        [
          [m1.id, 1],
          [m2.id, 1],
        ],
      );
      t.same({ ...got[0], delivery_count: undefined }, { ...m1, delivery_count: undefined }, "the message as sent");
      got = await pending(base, b);
      t.same(
        got.map((m) => m.delivery_count),
        [2, 2],
        "redelivered until acked",
      );
      const r = await ack(base, b, m1.id);
      t.equal(r.status, 204);
      t.equal(r.text, "");
      t.equal((await ack(base, b, m1.id)).status, 204, "ack is idempotent");
      const m3 = await sendOk(base, a, b.id, "three");
      got = await pending(base, b);
      t.same(
        got.map((m) => [m.id, m.delivery_count]),
        [
          [m2.id, 3],
          [m3.id, 1],
        ],
        "unacked first, oldest first, then new",
      );
      // b's inbox is a stream: m1, m2, m3 are numbered 1, 2, 3 in it; the ack moved b's cursor past m1, in Postgres
      const seqs = await node.svc.sql<{ id: string; seq: string }[]>`
        select id::text, seq::text from messages where recipient = ${b.id} order by seq`;
      t.same(
        seqs.map((r) => [r.id, r.seq]),
        [
          [m1.id.slice(4), "1"],
          [m2.id.slice(4), "2"],
          [m3.id.slice(4), "3"],
        ],
        "numbered in the inbox",
      );
      const [cursor] = await node.svc.sql<{ acked_seq: string; delivered_seq: string }[]>`
        select acked_seq::text, delivered_seq::text from stream_cursors where member = ${b.id} and thread_id = 0`;
      t.same(
        cursor,
        { acked_seq: "1", delivered_seq: "3" },
        "the ack is in Postgres: the inbox cursor took m1; all three were handed out",
      );
      const above = await node.svc.sql`select seq from stream_acks where member = ${b.id} and thread_id = 0`;
      t.equal(above.length, 0, "nothing acknowledged out of order");
      const counts = await node.svc.sql<{ seq: string; count: number }[]>`
        select seq::text, count from handout_counts where member = ${b.id} and thread_id = 0 order by seq`;
      t.same(
        counts.map((r) => [r.seq, r.count]),
        [["2", 3]],
        "m2's third hand-out is counted; m1's count went with the cursor",
      );
    });

    t.test("acking someone else's message, or nothing, is 404", async (t) => {
      const a = await registerAgent(base, "a");
      const b = await registerAgent(base, "b");
      const c = await registerAgent(base, "c");
      const m = await sendOk(base, a, b.id);
      t.equal((await ack(base, c, m.id)).status, 404, "a stranger");
      t.equal((await ack(base, a, m.id)).status, 404, "the sender");
      t.equal((await ack(base, b, "msg_1")).status, 404);
      t.equal((await ack(base, b, "nope")).status, 404);
      t.equal((await pending(base, b)).length, 1, "still pending for its recipient");
    });

    t.test("limit caps an answer; query validation", async (t) => {
      const a = await registerAgent(base, "a");
      const b = await registerAgent(base, "b");
      for (const body of ["1", "2", "3"]) await sendOk(base, a, b.id, body);
      t.same(
        (await pending(base, b, "limit=2")).map((m) => m.body),
        ["1", "2"],
      );
      for (const q of ["timeout=-1", "timeout=abc", "limit=0", "limit=101", "limit=1.5"]) {
        const r = await call(base, "GET", `/v1/messages/pending?${q}`, { token: b.token });
        t.equal(r.status, 400, q);
        t.equal(r.body.error, "invalid_request", q);
      }
    });

    t.test("a long poll is woken by a send, not answered at its timeout", async (t) => {
      const a = await registerAgent(base, "a");
      const b = await registerAgent(base, "b");
      const waiting = pending(base, b, "timeout=10");
      await until(() => hub.waiters.size > 0);
      const sentAt = performance.now();
      const m = await sendOk(base, a, b.id, "wake up");
      const got = await waiting;
      const ms = performance.now() - sentAt;
      t.same(
        got.map((x) => x.id),
        [m.id],
      );
      // a bound that shows a wake-up, far below the 10 s poll timeout, not a speed target (bench/ measures speed)
      t.ok(ms < 1000, `answered ${ms.toFixed(1)} ms after the send started (woken, not timed out)`);
    });

    t.test("a timeout over 30 is clamped, not refused", async (t) => {
      const a = await registerAgent(base, "a");
      const b = await registerAgent(base, "b");
      const waiting = pending(base, b, "timeout=3600");
      await until(() => hub.waiters.size > 0);
      await sendOk(base, a, b.id);
      t.equal((await waiting).length, 1);
    });

    t.test("with nothing to deliver a long poll answers empty after its timeout", async (t) => {
      const b = await registerAgent(base, "b");
      const started = performance.now();
      const got = await pending(base, b, "timeout=0.3");
      const ms = performance.now() - started;
      t.same(got, []);
      t.ok(ms >= 290 && ms < 2000, `answered after ${ms.toFixed(0)} ms`);
      t.same(await pending(base, b), [], "timeout=0 answers at once");
    });

    t.test("a client that goes away releases its waiter at once", async (t) => {
      const b = await registerAgent(base, "b");
      const before = hub.waiters.size;
      const ac = new AbortController();
      const p = fetch(`${base}/v1/messages/pending?timeout=30`, {
        headers: { authorization: `Bearer ${b.token}` },
        signal: ac.signal,
      }).catch(() => null);
      await until(() => hub.waiters.size > before);
      ac.abort();
      await p;
      await until(() => hub.waiters.size === before);
      t.equal(hub.waiters.size, before);
    });
  });
}

t.test("the 11th send within a second answers 429 (direct and group share the bucket)", async (t) => {
  const now = 1_800_000_000_000;
  const node = await startTestNode(t, { now: () => now });
  const base = node.url;
  const a = await registerAgent(base, "a");
  const b = await registerAgent(base, "b");
  const g = await call(base, "POST", "/v1/groups", { token: a.token, json: { name: "g", members: [b.id] } });
  t.equal(g.status, 201);
  for (let i = 0; i < 5; i++) t.equal((await send(base, a, b.id, `d${i}`)).status, 201);
  for (let i = 0; i < 5; i++) {
    const r = await call(base, "POST", `/v1/groups/${g.body.group.id}/messages`, {
      token: a.token,
      json: { body: `g${i}` },
    });
    t.equal(r.status, 201);
  }
  const r = await send(base, a, b.id, "eleventh");
  t.equal(r.status, 429);
  t.equal(r.body.error, "rate_limited");
  t.equal(r.body.retry_after, 1);
  t.equal(r.headers.get("retry-after"), "1");
  t.equal((await send(base, b, a.id, "other principal")).status, 201, "the bucket is per principal");
  t.equal((await pending(base, b)).length, 10, "the refused send delivered nothing");
});
