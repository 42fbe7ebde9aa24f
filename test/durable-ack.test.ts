// An answered ack is final (issue 17, item 1): the recipient's inbox cursor has taken the message in Postgres before
// the 204 (or the WebSocket ack frame), an ack Postgres cannot take is not answered as done, a cursor read before an
// ack and remembered after it does not bring the acknowledged message back while Postgres is away, and an ack needs
// no Redis to be answered: its cursor copy is written behind, held while Redis is out and written once it is back.
import postgres from "postgres";
import t from "tap";
import { Circuits } from "../runtime/circuit.ts";
import { Messaging } from "../runtime/messaging/hub.ts";
import { INBOX_THREAD } from "../runtime/messaging/stream-id.ts";
import { LOGS_AFTER_MS } from "../runtime/messaging/stream-reads.ts";
import { registerAgent } from "./helpers/http.ts";
import { startTestNode } from "./helpers/node.ts";
import { PrivateRedis } from "./helpers/private-servers.ts";
import { ack, Client, pending, sendOk } from "./messaging-helpers.ts";
import { until } from "./helpers/wait.ts";

/** A Postgres that cannot be reached. */
const unreachable = () =>
  postgres("postgres://postgres@127.0.0.1:1/none", { max: 1, connect_timeout: 1, onnotice: () => {} });

for (const engine of ["redis", "memory"] as const) {
  t.test(`durable acks (${engine} engines)`, async (t) => {
    const node = await startTestNode(t, { engine });
    const base = node.url;
    /** The message, if its recipient has not acknowledged it: past the inbox cursor and not acknowledged above it. */
    const rows = (id: string) => node.svc.sql`
      select 1 from messages m join stream_cursors c on c.member = m.recipient and c.thread_id = 0
      where m.id = ${id.slice(4)} and m.seq > c.acked_seq
        and not exists (select 1 from stream_acks a where a.member = m.recipient and a.thread_id = 0 and a.seq = m.seq)`;

    t.test("the inbox cursor takes the message before the 204", async (t) => {
      const a = await registerAgent(base, "a");
      const b = await registerAgent(base, "b");
      for (let i = 0; i < 5; i++) {
        const m = await sendOk(base, a, b.id, `m${i}`);
        t.equal((await pending(base, b)).length, 1);
        t.equal((await ack(base, b, m.id)).status, 204);
        t.equal((await rows(m.id)).length, 0, `message ${i} acknowledged in Postgres when the ack is answered`);
        t.equal((await ack(base, b, m.id)).status, 204, "acking again still 204");
      }
    });

    t.test("a WebSocket ack with a ref is answered once Postgres has it", async (t) => {
      const a = await registerAgent(base, "a");
      const b = await registerAgent(base, "b");
      const c = await Client.open(base, { token: b.token });
      t.teardown(() => c.ws.close());
      await c.next((f) => f.type === "ready");
      const m = await sendOk(base, a, b.id, "over ws");
      await c.next((f) => f.type === "message" && f.message.id === m.id);
      c.send({ type: "ack", id: m.id, ref: "r1" });
      await c.next((f) => f.type === "ack" && f.ref === "r1");
      t.equal((await rows(m.id)).length, 0, "acknowledged in Postgres when the ack frame is answered");
    });

    t.test("an ack Postgres cannot take fails; retried, it answers", async (t) => {
      const a = await registerAgent(base, "a");
      const b = await registerAgent(base, "b");
      const m = await sendOk(base, a, b.id, "x");
      t.equal((await pending(base, b)).length, 1, "pending");
      // the same node's engines, with a Postgres that cannot be reached
      const down = unreachable();
      t.teardown(() => down.end({ timeout: 0 }));
      const broken = new Messaging({ ...node.svc, sql: down as unknown as typeof node.svc.sql });
      await t.rejects(broken.ack(b.id, BigInt(m.id.slice(4))), "not answered as done");
      t.equal((await rows(m.id)).length, 1, "still unacknowledged in Postgres");
      t.equal((await pending(base, b)).length, 1, "and still delivered");
      t.equal((await ack(base, b, m.id)).status, 204);
      t.equal((await pending(base, b)).length, 0);
      t.equal((await rows(m.id)).length, 0);
    });

    t.test(
      "a cursor read before an ack, remembered after it, does not bring the message back while Postgres is away",
      async (t) => {
        const a = await registerAgent(base, "a");
        const b = await registerAgent(base, "b");
        // another node's hub on the same engines (remembered cursors, pub/sub), whose Postgres is out of reach: its long
        // polls answer from the messages it heard of, past the cursors the engines remember
        const down = unreachable();
        const circuits = new Circuits({ postgres: () => down`select 1` }, node.svc.log);
        const away = new Messaging({ ...node.svc, sql: down as unknown as typeof node.svc.sql, circuits });
        await away.start();
        t.teardown(async () => {
          await away.close();
          circuits.stop();
          await down.end({ timeout: 0 });
        });
        const m = await sendOk(base, a, b.id, "acked");
        // a long poll's read of the cursor in Postgres, then the ack (committed, and its cursor remembered), then the
        // poll's read remembered late, as it would be (ifAbsent: it only fills in a cursor not remembered)
        const [read] = await node.svc.sql<
          { acked_seq: string }[]
        >`select acked_seq::text from stream_cursors where member = ${b.id} and thread_id = 0`;
        t.equal(read?.acked_seq, "0", "read before the ack");
        t.equal(await node.svc.hub.ack(b.id, BigInt(m.id.slice(4))), true);
        await node.svc.engines.streamCursors.merge([
          { member: b.id, thread: INBOX_THREAD, acked: Number(read!.acked_seq), above: [], ifAbsent: true },
        ]);
        t.same(
          await node.svc.engines.streamCursors.read(b.id, [INBOX_THREAD]),
          new Map([[INBOX_THREAD, { acked: 1, above: [] }]]),
          "the ack's cursor is remembered",
        );

        circuits.postgres.open(new Error("test: Postgres away"));
        // sent after m on the same channel: once `away` has heard it, it has heard m
        const m2 = await sendOk(base, a, b.id, "not acked");
        // the logs are read once the circuit has been open for the margin (a cursor copy may be on its way before)
        await until(() => circuits.postgres.openMs >= LOGS_AFTER_MS, { what: "the margin" });
        const { entries: got } = await away.poll(b.id, 10, 3000, () => {});
        t.same(
          got.map((e) => `msg_${e.id}`),
          [m2.id],
          "the acknowledged message is not delivered again; the next one is",
        );
        t.equal(got[0]?.deliveryCount, 2, "counted as possibly delivered before (the node cannot know)");
      },
    );
  });
}

t.test("an ack answered while Redis is out: its cursor copy is held and lands once Redis is back", async (t) => {
  const redis = await PrivateRedis.start(t);
  const node = await startTestNode(t, { env: { REDIS_URL: redis.url, REDIS_PREFIX: "acks:" }, prefix: "acks:" });
  const a = await registerAgent(node.url, "a");
  const b = await registerAgent(node.url, "b");
  const m = await sendOk(node.url, a, b.id, "acked while Redis is out");
  t.equal((await pending(node.url, b)).length, 1);
  await redis.kill();
  await until(async () => (await ack(node.url, b, m.id)).status === 204, { ms: 5000, what: "the ack answered" });
  t.same(await pending(node.url, b), [], "taken in Postgres");
  const copies = node.svc.hub.streams.reads.copies;
  t.ok(copies.pending(b.id), "its cursor copy is held");
  await redis.restart();
  await until(() => !copies.pending(b.id), { ms: 5000, what: "the held copy written" });
  t.same(
    await node.svc.engines.streamCursors.read(b.id, [INBOX_THREAD]),
    new Map([[INBOX_THREAD, { acked: 1, above: [] }]]),
    "the cursor is remembered in Redis",
  );
});
