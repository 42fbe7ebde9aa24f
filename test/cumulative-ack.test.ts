// Cumulative acks: `POST /v1/messages/{id}/ack?through=true` and the WebSocket ack frame with `through: true`
// acknowledge that message and every one of the same thread handed out to the caller before it, for good (Postgres
// rows and mailbox entries, so a rebuilt mailbox does not bring them back). Other threads are untouched, a plain ack
// still acknowledges one message, and a cumulative ack of a message that is not the caller's changes nothing. (What
// "handed out before it" means exactly, for messages appended late, is the mailbox contract's: MailboxEngine.handedBefore.)
import t from "tap";
import { call, type Registered, registerAgent } from "./helpers/http.ts";
import { startTestNode } from "./helpers/node.ts";
import { ack, Client, createGroup, pending, postToGroup, sendOk } from "./messaging-helpers.ts";

const ids = (ms: { id: string }[]) => ms.map((m) => m.id);

for (const engine of ["redis", "memory"] as const) {
  t.test(`cumulative acks (${engine} engines, real Postgres)`, async (t) => {
    const node = await startTestNode(t, { engine });
    const base = node.url;
    const group = (owner: Registered, members: Registered[]) => createGroup(base, owner, members, "G");
    const post = (who: Registered, g: string, body: string) => postToGroup(base, who, g, body);
    const ackThrough = (who: Registered, id: string, through = "true") =>
      call(base, "POST", `/v1/messages/${id}/ack?through=${through}`, { token: who.token });

    t.test("over HTTP: one ack takes every earlier message of that thread, and only of that thread", async (t) => {
      const a = await registerAgent(base, "A");
      const b = await registerAgent(base, "B");
      const g1 = await group(a, [b]);
      const g2 = await group(a, [b]);
      const first = [await post(a, g1, "1"), await post(a, g1, "2")];
      const other = await post(a, g2, "other");
      const direct = await sendOk(base, a, b.id, "direct");
      const third = await post(a, g1, "3");
      const later = await post(a, g1, "4");
      t.same(ids(await pending(base, b)), [...first, other, direct.id, third, later], "all six delivered, oldest first");

      t.equal((await ackThrough(b, third)).status, 204);
      t.same(ids(await pending(base, b)), [other, direct.id, later], "1, 2 and 3 are gone; the other group, the direct message and 4 stay");
      // gone for good: a mailbox rebuilt from Postgres does not bring them back
      await node.svc.engines.mailboxes.clear(b.id);
      t.same(ids(await pending(base, b)), [other, direct.id, later], "the same after a rebuild from Postgres");
      t.equal((await ack(base, b, first[0]!)).status, 204, "a plain ack of a message already taken is still accepted");
      t.equal((await ackThrough(b, third)).status, 204, "and so is the same cumulative ack again");
    });

    t.test("a plain ack is of one message; through=false is a plain ack; a bad value is a 400", async (t) => {
      const a = await registerAgent(base, "A");
      const b = await registerAgent(base, "B");
      const g = await group(a, [b]);
      const m = [await post(a, g, "1"), await post(a, g, "2"), await post(a, g, "3")];
      t.equal((await ack(base, b, m[1]!)).status, 204);
      t.equal((await ackThrough(b, m[2]!, "false")).status, 204);
      t.same(ids(await pending(base, b)), [m[0]], "the first waits: neither ack reached back");
      const bad = await ackThrough(b, m[0]!, "yes");
      t.equal(bad.status, 400);
      t.equal(bad.body.error, "invalid_request");
      t.same(ids(await pending(base, b)), [m[0]], "a refused ack changes nothing");
    });

    t.test("a cumulative ack of a message that is not the caller's is a 404 and takes nothing", async (t) => {
      const a = await registerAgent(base, "A");
      const b = await registerAgent(base, "B");
      const c = await registerAgent(base, "C");
      const g = await group(a, [b]);
      const m1 = await post(a, g, "1");
      const mine = await post(b, g, "from b"); // b's own message: nothing of b's to take through it
      const outsider = await sendOk(base, a, c.id, "not b's");
      // b's own: acknowledged as it was stored, so accepted, but it takes nothing before it (b never got m1)
      t.equal((await ackThrough(b, mine)).status, 204);
      t.equal((await ackThrough(b, outsider.id)).status, 404);
      t.equal((await ackThrough(b, "msg_1")).status, 404);
      t.same(ids(await pending(base, b)), [m1], "b's message from a still waits");
    });

    t.test("over the WebSocket: an ack frame with through takes the earlier ones", async (t) => {
      const a = await registerAgent(base, "A");
      const b = await registerAgent(base, "B");
      const g = await group(a, [b]);
      const ws = await Client.open(base, { token: b.token });
      t.teardown(() => ws.close());
      await ws.nextOfType("ready");
      const sent = [];
      for (let i = 0; i < 5; i++) sent.push(await post(a, g, `m${i}`));
      const got = [];
      for (let i = 0; i < 5; i++) got.push((await ws.nextOfType("message")).message.id);
      t.same(got, sent, "five messages in order");
      ws.send({ type: "ack", id: sent[3], through: true, ref: "r1" });
      const answer = await ws.next((f) => f.ref === "r1");
      t.same(answer, { type: "ack", id: sent[3], ref: "r1" }, "answered once final");
      ws.close();
      t.same(ids(await pending(base, b)), [sent[4]], "only the fifth is left");
    });
  });
}
