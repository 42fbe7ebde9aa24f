import postgres from "postgres";
import t from "tap";
import { parseId } from "../runtime/ids.ts";
import { call, registerAgent } from "./helpers/http.ts";
import { TEST_DATABASE_URL } from "./helpers/env.ts";
import { deletePrefix, startTestNode } from "./helpers/node.ts";
import { ack, Client, pending, sendOk, until } from "./messaging-helpers.ts";

t.test("a Redis flush loses no unacknowledged message", async (t) => {
  const node = await startTestNode(t, { env: { FLOCK_LIMITS_SCALE: "100" } });
  const base = node.url;
  const hub = node.svc.hub;
  const a = await registerAgent(base, "sender");
  const b = await registerAgent(base, "poller");
  const c = await registerAgent(base, "socket");

  const direct = [];
  for (let i = 0; i < 12; i++) direct.push(await sendOk(base, a, b.id, `d${i}`));
  const g = await call(base, "POST", "/v1/groups", { token: a.token, json: { name: "g", members: [b.id, c.id] } });
  const group = await call(base, "POST", `/v1/groups/${g.body.group.id}/messages`, { token: a.token, json: { body: "to all" } });
  t.equal(group.status, 201);
  const toC = await sendOk(base, a, c.id, "for the socket");

  // b sees everything once and acknowledges two; the counts of the other ten reach Postgres, and the two
  // acknowledged before the counts were written cost no count write
  // (in process, so the acks surely come before the count log's next write: that is what is tested); the group
  // message is read past b's cursor, which marks it delivered in the same statement (it has no delivery row)
  const first = await hub.fetch(b.id, 100, null);
  const acks = [hub.ack(b.id, parseId("message", direct[0].id)!), hub.ack(b.id, parseId("message", direct[5].id)!)];
  t.equal(first.length, 12);
  t.same((await hub.groups.backlog(b.id, null, 100)).entries.map((e) => e.id), [group.body.id.slice(4)]);
  t.same(await Promise.all(acks), [true, true]);
  await until(async () => {
    const [row] = await node.svc.sql`
      select count(*)::int as n from deliveries where recipient = ${b.id} and delivery_count >= 1`;
    return row?.n === 10;
  });
  await hub.flushWrites();
  const acked = await node.svc.sql`
    select 1 from deliveries where recipient = ${b.id} and message_id = any(${[direct[0].id, direct[5].id].map((i) => i.slice(4))}::bigint[])`;
  t.equal(acked.length, 0, "acknowledged deliveries are gone, and writing counts brings none back");

  await deletePrefix(node.prefix);
  t.equal(await node.svc.engines.mailboxes.fetch(b.id, 10, null), null, "the mailbox is gone from Redis");

  const expected = [...direct.filter((_, i) => i !== 0 && i !== 5).map((m) => m.id), group.body.id];
  const rebuilt = await pending(base, b, "limit=100");
  t.same(
    rebuilt.map((m) => m.id),
    expected,
    "every unacknowledged message, oldest first, rebuilt from Postgres",
  );
  t.same(
    rebuilt.map((m) => m.delivery_count),
    expected.map(() => 2),
    "delivery counts carry on from Postgres",
  );
  t.same({ ...rebuilt[0], delivery_count: undefined }, { ...direct[1], delivery_count: undefined }, "the same message");

  // a WebSocket that connects after the flush gets its unacknowledged messages
  const ws = await Client.open(base, { token: c.token });
  t.teardown(() => ws.close());
  await ws.nextOfType("ready");
  const gotC = [(await ws.nextOfType("message")).message.id, (await ws.nextOfType("message")).message.id];
  t.same(gotC.sort(), [group.body.id, toC.id].sort(), "the group's (past its cursor) and the direct one (its mailbox)");

  // new sends after the flush still wake a waiting long poll and arrive after the old ones
  await Promise.all(expected.map((id) => ack(base, b, id)));
  const before = hub.waiters.size;
  const polling = pending(base, b, "timeout=10");
  await until(() => hub.waiters.size > before);
  const fresh = await sendOk(base, a, b.id, "after the flush");
  t.same(
    (await polling).map((m) => m.id),
    [fresh.id],
  );

  // a flush while a long poll waits: the next send still wakes it
  await deletePrefix(node.prefix);
  await ack(base, b, fresh.id);
  const before2 = hub.waiters.size;
  const polling2 = pending(base, b, "timeout=10");
  await until(() => hub.waiters.size > before2);
  const again = await sendOk(base, a, b.id, "flushed again");
  t.same(
    (await polling2).map((m) => m.id),
    [again.id],
  );
});

t.test("acknowledgements are in Postgres when answered, and none comes back after a Redis flush", async (t) => {
  const node = await startTestNode(t);
  const base = node.url;
  const hub = node.svc.hub;
  const a = await registerAgent(base, "sender");
  const b = await registerAgent(base, "reader");
  const rows = async () =>
    (await node.svc.sql`select message_id::text as id from deliveries where recipient = ${b.id} order by message_id`).map((r) => `msg_${r["id"]}`);

  const [m1, m2, m3] = [await sendOk(base, a, b.id, "1"), await sendOk(base, a, b.id, "2"), await sendOk(base, a, b.id, "3")];
  t.equal((await pending(base, b)).length, 3);
  t.equal((await ack(base, b, m1.id)).status, 204);
  t.notOk((await rows()).includes(m1.id), "an answered ack is in Postgres");

  // a Redis flush right after an ack
  t.equal(await hub.ack(b.id, parseId("message", m2.id)!), true);
  t.notOk((await rows()).includes(m2.id), "in Postgres when answered");
  await deletePrefix(node.prefix);
  t.same(
    (await pending(base, b)).map((m) => m.id),
    [m3.id],
    "the acknowledged message does not come back from Postgres",
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
  t.equal((await hub.fetch(b.id, 10, null)).length, 3);
  const acks = sent.map((m) => hub.ack(b.id, parseId("message", m.id)!));
  // the node stops with the acks still under way (close awaits them)
  const stopped = node.close();
  t.same(await Promise.all(acks), [true, true, true]);
  await stopped;
  const check = postgres(TEST_DATABASE_URL, { max: 1, onnotice: () => {}, connection: { search_path: node.schema } });
  t.teardown(() => check.end());
  const [left] = await check`select count(*)::int as n from deliveries where recipient = ${b.id}`;
  t.equal(left?.["n"], 0, "every acknowledgement is in Postgres");
});
