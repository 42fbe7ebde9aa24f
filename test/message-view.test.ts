// One message view (runtime/messaging/message-view-store.ts) and one insert (runtime/messaging/messages-store.ts), on
// Postgres with no node: a paid direct message with a file and a quote, and a group message, are stored by the three
// statements that insert messages, and every read that shows a message (a thread's history, the thread list's last
// message, a stream's backlog, a publish by id, a replay by Idempotency-Key, a search) shows each one alike, with its
// sender, its files, its quote and its payment.
import t from "tap";
import { migrate, readMigrations } from "../runtime/db/migrate.ts";
import { insertGroup } from "../runtime/messaging/group-admin-store.ts";
import { directThread } from "../runtime/messaging/direct-threads-store.ts";
import { history } from "../runtime/messaging/message-view-store.ts";
import { insertDirectBatch, insertGroupBatch, insertPaidDirect } from "../runtime/messaging/messages-store.ts";
import { type MessageRow, toMessage } from "../runtime/messaging/payload.ts";
import { backlog, joinGroup, messagesById, sentWithKey } from "../runtime/messaging/stream-store.ts";
import { threadsOf } from "../runtime/messaging/threads-store.ts";
import { claim } from "../runtime/payments/payments-store.ts";
import { searchMessages } from "../runtime/search/messages-store.ts";
import type { Message } from "../schema/messages.ts";
import { emptySchema } from "./helpers/node.ts";

const TX = `0x${"ab".repeat(32)}`;

t.test("every read shows a stored message alike", async (t) => {
  const { sql, schema } = await emptySchema(t);
  await migrate(sql, schema, readMigrations());
  await sql`
    insert into principals (id, kind, display_name, avatar_key)
    values ('1', 'agent', 'Alice', 'k1'), ('2', 'agent', 'Oracle', null), ('3', 'agent', 'Carol', null)`;
  await sql`
    insert into files (id, owner, name, content_type, size, sha256, created_at)
    values (500, '1', 'notes.txt', 'text/plain', 5, ${"0".repeat(64)}, now())`;
  const file = { id: "file_500", name: "notes.txt", content_type: "text/plain", size: 5 };
  const pair = (await directThread(sql, "1", "2", 10n))!;
  t.equal(pair, 10n, "the pair's thread is made");

  // the first message, unpaid: a batch of one
  const first = { id: 1000n, threadId: pair, sender: "1", recipient: "2", body: "first words", createdAt: new Date() };
  t.same(await insertDirectBatch(sql, [first]), [1], "the first message of the oracle's inbox");

  // a paid reply to it, with a file, stored with its settlement
  const paymentId = 77n;
  t.equal(
    await claim(sql, {
      id: paymentId,
      network: "eip155:31337",
      asset: "0x00000000000000000000000000000000000000aa",
      payer: "0x00000000000000000000000000000000000000bb",
      nonce: `0x${"01".repeat(32)}`,
      payTo: "0x00000000000000000000000000000000000000cc",
      amount: 10_000n,
      priceMicros: 10_000n,
      from: "1",
      to: "2",
    }),
    paymentId,
  );
  const quote = { id: "msg_1000", from: { id: "1", display_name: "Alice", avatar_url: null }, body: "first words" };
  const paid = {
    id: 1001n,
    threadId: pair,
    sender: "1",
    recipient: "2",
    body: "paid words",
    createdAt: new Date(),
    attachments: [file],
    idempotencyKey: "key-1",
    reply: quote,
  };
  t.equal(
    await insertPaidDirect(sql, paid, { paymentId, txHash: TX, explorerUrl: "https://explorer.example/tx" }),
    2,
    "the second message of the oracle's inbox",
  );
  const [payment] = await sql<{ status: string; message_id: bigint }[]>`
    select status, message_id from payments where id = ${String(paymentId)}`;
  t.same(payment, { status: "settled", message_id: 1001n }, "settled with its message");
  const [share] = await sql`select principal from file_shares where file_id = 500 and thread_id = ${String(pair)}`;
  t.same(share, { principal: "2" }, "the file is shared with the recipient as the message is stored");

  // a group message
  await sql.begin(async (tx) => {
    await insertGroup(tx, 20n, "crew", "1", ["1", "2", "3"]);
    await joinGroup(tx, 20n, ["1", "2", "3"]);
  });
  const grouped = { id: 1002n, threadId: 20n, sender: "1", body: "group words", createdAt: new Date() };
  t.same(await insertGroupBatch(sql, [grouped]), [1], "the first message of the group");

  const shown = (r: MessageRow) => toMessage(r);
  const parsed = (p: { payload: string }) => JSON.parse(p.payload) as Message;
  const horizon = 0n;

  const paidShown = shown((await history(sql, pair, null, 10, horizon, "0"))[0]!);
  t.match(paidShown, {
    id: "msg_1001",
    from: { id: "1", display_name: "Alice", avatar_url: "/v1/avatars/k1" },
    to: "2",
    body: "paid words",
    reply_to: quote,
    attachments: [{ ...file, url: "/v1/files/file_500" }],
    payment: { transaction: TX, network: "eip155:31337", amount: "10000", explorer_url: "https://explorer.example/tx" },
  });

  const threads = await threadsOf(sql, "2", null, 10, horizon);
  const lasts = new Map(threads.map((th) => [th.id, th.last]));
  t.same(shown(lasts.get(pair)!), paidShown, "the thread list's last message");
  const [read] = await backlog(sql, [{ member: "2", stream: null, limit: 10, after: 0 }], horizon);
  const handed = read!.entries.map(parsed);
  t.same(
    handed.find((m) => m.id === "msg_1001"),
    paidShown,
    "the backlog",
  );
  t.same(parsed((await messagesById(sql, ["1001"], horizon))[0]!), paidShown, "a publish by id");
  t.same(parsed((await sentWithKey(sql, "1", "key-1", 0n, horizon))!), paidShown, "a replay by its key");
  const found = await sql.begin((tx) => searchMessages(tx, "2", "paid", null, 10, horizon));
  t.same(found.map(shown), [paidShown], "a search");

  const groupShown = shown((await history(sql, 20n, null, 10, horizon, "0"))[0]!);
  t.match(groupShown, { id: "msg_1002", to: "group_20", from: { display_name: "Alice" }, body: "group words" });
  t.notOk("payment" in groupShown, "an unpaid message shows no payment");
  t.same(shown(lasts.get(20n)!), groupShown, "the group's last message");
  t.same(
    handed.find((m) => m.id === "msg_1002"),
    groupShown,
    "the group's backlog",
  );
  t.same(parsed((await messagesById(sql, ["1002"], horizon))[0]!), groupShown, "the group's publish");
});
