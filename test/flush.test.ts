import t from "tap";
import { parseId } from "../runtime/ids.ts";
import { messaging } from "../runtime/messaging/hub.ts";
import { call, registerAgent } from "./helpers/http.ts";
import { deletePrefix, startTestNode } from "./helpers/node.ts";
import { ack, Client, pending, sendOk, until } from "./messaging-helpers.ts";

t.test("a Redis flush loses no unacknowledged message", async (t) => {
  const node = await startTestNode(t, { env: { FLOCK_LIMITS_SCALE: "100" } });
  const base = node.url;
  const hub = messaging(node.svc);
  const a = await registerAgent(base, "sender");
  const b = await registerAgent(base, "poller");
  const c = await registerAgent(base, "socket");

  const direct = [];
  for (let i = 0; i < 12; i++) direct.push(await sendOk(base, a, b.id, `d${i}`));
  const g = await call(base, "POST", "/v1/groups", { token: a.token, json: { name: "g", members: [b.id, c.id] } });
  const group = await call(base, "POST", `/v1/groups/${g.body.group.id}/messages`, { token: a.token, json: { body: "to all" } });
  t.equal(group.status, 201);
  const toC = await sendOk(base, a, c.id, "for the socket");

  // b sees everything once and acknowledges two; the counts of the other eleven reach Postgres, and the two
  // acknowledged before the counts were written cost no count write
  // (in process, so the acks surely come before the count log's next write: that is what is tested)
  const first = await hub.fetch(b.id, 100, null);
  const acks = [hub.ack(b.id, parseId("message", direct[0].id)!), hub.ack(b.id, parseId("message", direct[5].id)!)];
  t.equal(first.length, 13);
  t.same(await Promise.all(acks), [true, true]);
  await until(async () => {
    const [row] = await node.svc.sql`
      select count(*)::int as n from deliveries where recipient = ${b.id} and delivery_count >= 1`;
    return row?.n === 11;
  });
  await hub.flushCounts();
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
  t.same(gotC, [group.body.id, toC.id]);

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
