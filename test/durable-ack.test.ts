// An answered ack is final (issue 17, item 1): the delivery row is gone from Postgres before the 204 (or the
// WebSocket ack frame), an ack Postgres cannot take is not answered as done, and a mailbox rebuilt from rows read
// before an ack does not bring the acknowledged message back.
import postgres from "postgres";
import t from "tap";
import { Messaging } from "../runtime/messaging/hub.ts";
import { registerAgent } from "./helpers/http.ts";
import { startTestNode } from "./helpers/node.ts";
import { ack, Client, pending, sendOk } from "./messaging-helpers.ts";

for (const engine of ["redis", "memory"] as const) {
  t.test(`durable acks (${engine} engines)`, async (t) => {
    const node = await startTestNode(t, { engine });
    const base = node.url;
    const rows = (id: string) => node.svc.sql`select 1 from deliveries where message_id = ${id.slice(4)}`;

    t.test("the delivery row is deleted before the 204", async (t) => {
      const a = await registerAgent(base, "a");
      const b = await registerAgent(base, "b");
      for (let i = 0; i < 5; i++) {
        const m = await sendOk(base, a, b.id, `m${i}`);
        t.equal((await pending(base, b)).length, 1);
        t.equal((await ack(base, b, m.id)).status, 204);
        t.equal((await rows(m.id)).length, 0, `row ${i} gone when the ack is answered`);
        t.equal((await ack(base, b, m.id)).status, 204, "acking again still 204");
      }
    });

    t.test("a WebSocket ack with a ref is answered after the row is gone", async (t) => {
      const a = await registerAgent(base, "a");
      const b = await registerAgent(base, "b");
      const c = await Client.open(base, { token: b.token });
      t.teardown(() => c.ws.close());
      await c.next((f) => f.type === "ready");
      const m = await sendOk(base, a, b.id, "over ws");
      await c.next((f) => f.type === "message" && f.message.id === m.id);
      c.send({ type: "ack", id: m.id, ref: "r1" });
      await c.next((f) => f.type === "ack" && f.ref === "r1");
      t.equal((await rows(m.id)).length, 0, "row gone when the ack frame is answered");
    });

    t.test("an ack Postgres cannot take fails; retried, it answers", async (t) => {
      const a = await registerAgent(base, "a");
      const b = await registerAgent(base, "b");
      const m = await sendOk(base, a, b.id, "x");
      t.equal((await pending(base, b)).length, 1, "in the mailbox");
      // the same node's engines, with a Postgres that cannot be reached
      const down = postgres("postgres://postgres@127.0.0.1:1/none", { max: 1, connect_timeout: 1, onnotice: () => {} });
      t.teardown(() => down.end({ timeout: 0 }));
      const broken = new Messaging({ ...node.svc, sql: down as unknown as typeof node.svc.sql });
      await t.rejects(broken.ack(b.id, BigInt(m.id.slice(4))), "not answered as done");
      t.equal((await rows(m.id)).length, 1, "still unacknowledged in Postgres");
      t.equal((await pending(base, b)).length, 1, "and still delivered");
      t.equal((await ack(base, b, m.id)).status, 204);
      t.equal((await pending(base, b)).length, 0);
      t.equal((await rows(m.id)).length, 0);
    });

    t.test("a rebuild from rows read before an ack does not bring the message back", async (t) => {
      const a = await registerAgent(base, "a");
      const b = await registerAgent(base, "b");
      const m = await sendOk(base, a, b.id, "x");
      const hub = node.svc.hub;
      const mb = node.svc.engines.mailboxes;
      await mb.clear(b.id);
      // the rebuild's read of Postgres, then the ack (it finds no mailbox), then the rebuild installs what it read
      const [row] = await node.svc.sql<{ id: bigint }[]>`select message_id as id from deliveries where recipient = ${b.id}`;
      t.equal(await hub.ack(b.id, BigInt(m.id.slice(4))), true);
      await mb.seed(b.id, [{ id: row!.id.toString(), payload: JSON.stringify({ id: m.id }), deliveryCount: 0 }], true);
      t.same(await mb.fetch(b.id, 10, null), [], "acknowledged: not delivered again");
    });
  });
}
