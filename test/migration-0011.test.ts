// Upgrading to one delivery model (migration 0011) keeps what each recipient has and has not acknowledged: direct
// messages stored as before (a `deliveries` row per unacknowledged one, with its count) are numbered in their
// recipients' inboxes, and the first reads afterwards hand out exactly the unacknowledged ones, counting on.
import t from "tap";
import { migrate, readMigrations } from "../runtime/db/migrate.ts";
import { backlog } from "../runtime/messaging/stream-store.ts";
import { INBOX_THREAD, inboxStream } from "../runtime/messaging/stream-id.ts";
import { ackBatch } from "../runtime/messaging/acks-store.ts";
import { insertDirectBatch } from "../runtime/messaging/messages-store.ts";
import { emptySchema } from "./helpers/node.ts";

t.test("migration 0011 turns deliveries rows into inbox cursors, counts kept", async (t) => {
  const { sql, schema } = await emptySchema(t);
  const all = readMigrations();
  const before = all.filter((m) => m.name < "0011");
  t.ok(before.length < all.length, "0011 is among the migrations");
  await migrate(sql, schema, before);

  // as the code before 0011 stored them: a row per message, a deliveries row while unacknowledged
  await sql`insert into principals (id, kind, display_name) values ('1', 'agent', 'a'), ('2', 'agent', 'b'), ('3', 'agent', 'c')`;
  await sql`insert into threads (id, kind, pair_key) values (10, 'direct', '1:2'), (11, 'direct', '1:3')`;
  await sql`
    insert into messages (id, thread_id, sender, recipient, body, created_at)
    select id, th, '1', rcpt, 'm' || id, now() from (values (100, 10, '2'), (101, 10, '2'), (102, 10, '2'), (103, 10, '2'), (104, 11, '3'))
      as v(id, th, rcpt)`;
  // b acknowledged 100 and 102 (no row); 101 was handed out three times, 103 once; c's 104 never
  await sql`
    insert into deliveries (recipient, message_id, delivery_count)
    values ('2', 101, 3), ('2', 103, 1), ('3', 104, 0)`;

  t.same(
    (await migrate(sql, schema, all))[0],
    "0011_inbox_streams.sql",
    "0011 applied first (and the later ones after it)",
  );
  const [b, c] = await backlog(
    sql,
    [
      { member: "2", stream: null, limit: 50, after: 0 },
      { member: "3", stream: null, limit: 50, after: 0 },
    ],
    0n,
  );
  t.same(
    b!.entries.map((e) => [e.id, e.seq, e.deliveryCount]),
    [
      ["101", 2, 4],
      ["103", 4, 2],
    ],
    "b gets what it had not acknowledged, in inbox order, each counted on from its row",
  );
  t.same(
    b!.cursors.get(inboxStream("2")),
    { acked: 1, above: [3], expired: 0 },
    "its cursor stops before 101; 102 is acknowledged above it",
  );
  t.same(
    c!.entries.map((e) => [e.id, e.deliveryCount]),
    [["104", 1]],
    "c's message never handed out counts 1",
  );

  // the inboxes go on numbering, and acks move the migrated cursors
  const seq = await insertDirectBatch(sql, [
    { id: 105n, threadId: 10n, sender: "1", recipient: "2", body: "after", createdAt: new Date() },
  ]);
  t.same(seq, [5], "the next message to b is number 5");
  const acked = await ackBatch(sql, [{ recipient: "2", id: 101n }]);
  t.same(
    acked,
    [{ thread: INBOX_THREAD, seq: 2, acked: 3 }],
    "acking 101 takes the cursor over 102, acknowledged before",
  );
  const [again] = await backlog(sql, [{ member: "2", stream: null, limit: 50, after: 0 }], 0n);
  t.same(
    again!.entries.map((e) => [e.id, e.deliveryCount]),
    [
      ["103", 3],
      ["105", 1],
    ],
  );
});
