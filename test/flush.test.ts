// A Redis flush (every key under the node's prefix) loses no unacknowledged message and brings back no acknowledged
// one: what a principal has not acknowledged is what lies past its cursors in Postgres (the inbox's and each group's,
// stream_cursors and stream_acks), and Redis only remembers those cursors for reads while Postgres is away.
import postgres from "postgres";
import t from "tap";
import { parseId } from "../runtime/ids.ts";
import { INBOX_THREAD } from "../runtime/messaging/stream-id.ts";
import type { Sql } from "../runtime/db/client.ts";
import { call, type Registered, registerAgent } from "./helpers/http.ts";
import { TEST_DATABASE_URL } from "./helpers/env.ts";
import { deletePrefix, startTestNode } from "./helpers/node.ts";
import { ack, Client, pending, sendOk } from "./messaging-helpers.ts";
import { until } from "./helpers/wait.ts";

/** A principal's cursor in its inbox, in Postgres: acknowledged up to, above it out of order, handed out up to. */
async function inboxCursor(sql: Sql, who: Registered) {
  const [row] = await sql<{ acked: string; delivered: string }[]>`
    select acked_seq::text as acked, delivered_seq::text as delivered from stream_cursors where member = ${who.id} and thread_id = 0`;
  const above = await sql<
    { seq: string }[]
  >`select seq::text from stream_acks where member = ${who.id} and thread_id = 0 order by seq`;
  return { acked: Number(row?.acked), above: above.map((r) => Number(r.seq)), delivered: Number(row?.delivered) };
}

/** The ids of a principal's direct messages it has not acknowledged: past its inbox cursor and not acknowledged above it. */
async function unacked(sql: Sql, who: Registered): Promise<string[]> {
  const rows = await sql<{ id: string }[]>`
    select m.id::text from messages m join stream_cursors c on c.member = m.recipient and c.thread_id = 0
    where m.recipient = ${who.id} and m.seq > c.acked_seq
      and not exists (select 1 from stream_acks a where a.member = m.recipient and a.thread_id = 0 and a.seq = m.seq)
    order by m.seq`;
  return rows.map((r) => `msg_${r.id}`);
}

t.test("a Redis flush loses no unacknowledged message", async (t) => {
  const node = await startTestNode(t, { env: { FLOCK_LIMITS_SCALE: "100" } });
  const base = node.url;
  const hub = node.svc.hub;
  const sql = node.svc.sql;
  const a = await registerAgent(base, "sender");
  const b = await registerAgent(base, "poller");
  const c = await registerAgent(base, "socket");

  const direct = [];
  for (let i = 0; i < 12; i++) direct.push(await sendOk(base, a, b.id, `d${i}`));
  const g = await call(base, "POST", "/v1/groups", { token: a.token, json: { name: "g", members: [b.id, c.id] } });
  const thread = parseId("group", g.body.group.id)!;
  const group = await call(base, "POST", `/v1/groups/${g.body.group.id}/messages`, {
    token: a.token,
    json: { body: "to all" },
  });
  t.equal(group.status, 201);
  const toC = await sendOk(base, a, c.id, "for the socket");

  // b sees everything once and acknowledges two, the second out of order
  const first = await pending(base, b, "limit=100");
  t.same(
    first.map((m) => m.id),
    [...direct.map((m) => m.id), group.body.id],
    "twelve direct messages and the group's, oldest first",
  );
  t.same(
    first.map((m) => m.delivery_count),
    first.map(() => 1),
  );
  t.equal((await ack(base, b, direct[0].id)).status, 204);
  t.equal((await ack(base, b, direct[5].id)).status, 204);
  t.same(
    await inboxCursor(sql, b),
    { acked: 1, above: [6], delivered: 12 },
    "in Postgres: the cursor past 1, 6 above it, all twelve handed out",
  );
  t.same(
    await node.svc.engines.streamCursors.read(b.id, [INBOX_THREAD]),
    new Map([[INBOX_THREAD, { acked: 1, above: [6] }]]),
    "and remembered in Redis",
  );

  await deletePrefix(node.prefix);
  t.same(
    await node.svc.engines.streamCursors.read(b.id, [INBOX_THREAD, thread]),
    new Map(),
    "Redis remembers nothing of b any more",
  );

  const expected = [...direct.filter((_, i) => i !== 0 && i !== 5).map((m) => m.id), group.body.id];
  const after = await pending(base, b, "limit=100");
  t.same(
    after.map((m) => m.id),
    expected,
    "every unacknowledged message, oldest first, and no acknowledged one",
  );
  t.same(
    after.map((m) => m.delivery_count),
    expected.map(() => 2),
    "delivery counts carry on (they are in Postgres)",
  );
  t.same({ ...after[0], delivery_count: undefined }, { ...direct[1], delivery_count: undefined }, "the same message");
  t.same(await unacked(sql, b), expected.slice(0, -1), "Postgres agrees on the direct ones");

  // a WebSocket that connects after the flush gets its unacknowledged messages
  const ws = await Client.open(base, { token: c.token });
  t.teardown(() => ws.close());
  await ws.nextOfType("ready");
  const gotC = [(await ws.nextOfType("message")).message.id, (await ws.nextOfType("message")).message.id];
  t.same(gotC.sort(), [group.body.id, toC.id].sort(), "the group's and the direct one (both past c's cursors)");

  // new sends after the flush still wake a waiting long poll and arrive after the old ones
  await Promise.all(expected.map((id) => ack(base, b, id)));
  t.same(await unacked(sql, b), [], "all acknowledged");
  const before = hub.waiters.size;
  const polling = pending(base, b, "timeout=10");
  await until(() => hub.waiters.size > before);
  const fresh = await sendOk(base, a, b.id, "after the flush");
  t.same(
    (await polling).map((m) => m.id),
    [fresh.id],
  );

  // a flush while a long poll waits: the next send still wakes it
  await ack(base, b, fresh.id);
  const before2 = hub.waiters.size;
  const polling2 = pending(base, b, "timeout=10");
  await until(() => hub.waiters.size > before2);
  await deletePrefix(node.prefix);
  const again = await sendOk(base, a, b.id, "flushed again");
  t.same(
    (await polling2).map((m) => m.id),
    [again.id],
  );
});

t.test(
  "a long poll that never acknowledges sees its messages again and again, counted, across Redis flushes",
  async (t) => {
    const node = await startTestNode(t);
    const base = node.url;
    const a = await registerAgent(base, "sender");
    const b = await registerAgent(base, "reader");
    const m1 = await sendOk(base, a, b.id, "1");
    const counts = async () => (await pending(base, b)).map((m) => [m.id, m.delivery_count]);
    t.same(await counts(), [[m1.id, 1]]);
    await deletePrefix(node.prefix);
    t.same(await counts(), [[m1.id, 2]], "after a flush: 2");
    const m2 = await sendOk(base, a, b.id, "2");
    t.same(
      await counts(),
      [
        [m1.id, 3],
        [m2.id, 1],
      ],
      "a new message says 1",
    );
    await deletePrefix(node.prefix);
    t.same(await counts(), [
      [m1.id, 4],
      [m2.id, 2],
    ]);
  },
);

t.test("acknowledgements are in Postgres when answered, and none comes back after a Redis flush", async (t) => {
  const node = await startTestNode(t);
  const base = node.url;
  const hub = node.svc.hub;
  const sql = node.svc.sql;
  const a = await registerAgent(base, "sender");
  const b = await registerAgent(base, "reader");

  const [m1, m2, m3] = [
    await sendOk(base, a, b.id, "1"),
    await sendOk(base, a, b.id, "2"),
    await sendOk(base, a, b.id, "3"),
  ];
  t.equal((await pending(base, b)).length, 3);
  t.same(await unacked(sql, b), [m1.id, m2.id, m3.id]);
  t.equal((await ack(base, b, m1.id)).status, 204);
  t.same(await unacked(sql, b), [m2.id, m3.id], "an answered ack is in Postgres");

  // a Redis flush right after an ack
  t.equal(await hub.ack(b.id, parseId("message", m2.id)!), true);
  t.same(await unacked(sql, b), [m3.id], "in Postgres when answered");
  await deletePrefix(node.prefix);
  t.same(
    (await pending(base, b)).map((m) => m.id),
    [m3.id],
    "the acknowledged message does not come back",
  );
  t.equal((await ack(base, b, m2.id)).status, 204, "acking it again is still 204");
  t.equal((await ack(base, a, m3.id)).status, 404, "and acking what is not yours still 404");
});

t.test("a node that stops finishes the acknowledgements under way", async (t) => {
  const node = await startTestNode(t);
  const hub = node.svc.hub;
  const a = await registerAgent(node.url, "sender");
  const b = await registerAgent(node.url, "reader");
  const sent = await Promise.all(["1", "2", "3"].map((x) => sendOk(node.url, a, b.id, x)));
  t.equal((await hub.poll(b.id, 10, 0, () => {})).entries.length, 3);
  const acks = sent.map((m) => hub.ack(b.id, parseId("message", m.id)!));
  // the node stops with the acks still under way (close awaits them)
  const stopped = node.close();
  t.same(await Promise.all(acks), [true, true, true]);
  await stopped;
  const check = postgres(TEST_DATABASE_URL, { max: 1, onnotice: () => {}, connection: { search_path: node.schema } });
  t.teardown(() => check.end());
  t.same(await unacked(check as unknown as Sql, b), [], "every acknowledgement is in Postgres");
  const [cursor] =
    await check`select acked_seq::int as acked from stream_cursors where member = ${b.id} and thread_id = 0`;
  t.equal(cursor?.["acked"], 3, "the inbox cursor is past all three");
});
