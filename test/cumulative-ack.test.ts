// Cumulative acks: `POST /v1/messages/{id}/ack?through=true` and the WebSocket ack frame with `through: true`
// acknowledge that message and every earlier one of its stream, for good (the member's cursor in Postgres): of its
// group for a group message, of the caller's inbox for a direct message (every direct message to the caller, from
// anyone, reaches it in the inbox's order). Other streams are untouched, a plain ack still acknowledges one message,
// and a cumulative ack of a message that is not the caller's changes nothing.
import t from "tap";
import { call, type Registered, registerAgent } from "./helpers/http.ts";
import { parseId } from "../runtime/ids.ts";
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
    /** A member's cursor in Postgres: in a group (its id), or in its inbox (null): acknowledged up to, and above it. */
    const cursor = async (who: Registered, groupId: string | null) => {
      const thread = groupId === null ? "0" : String(parseId("group", groupId));
      const [row] = await node.svc.sql<{ acked: string }[]>`
        select acked_seq::text as acked from stream_cursors where member = ${who.id} and thread_id = ${thread}`;
      const above = await node.svc.sql<{ seq: string }[]>`
        select seq::text from stream_acks where member = ${who.id} and thread_id = ${thread} order by seq`;
      return { acked: Number(row?.acked), above: above.map((r) => Number(r.seq)) };
    };

    t.test(
      "over HTTP: one ack of a group message takes every earlier message of that group, and only of that group",
      async (t) => {
        const a = await registerAgent(base, "A");
        const b = await registerAgent(base, "B");
        const g1 = await group(a, [b]);
        const g2 = await group(a, [b]);
        const first = [await post(a, g1, "1"), await post(a, g1, "2")];
        const other = await post(a, g2, "other");
        const direct = await sendOk(base, a, b.id, "direct");
        const third = await post(a, g1, "3");
        const later = await post(a, g1, "4");
        t.same(
          ids(await pending(base, b)),
          [...first, other, direct.id, third, later],
          "all six delivered, oldest first",
        );

        t.equal((await ackThrough(b, third)).status, 204);
        t.same(
          ids(await pending(base, b)),
          [other, direct.id, later],
          "1, 2 and 3 are gone; the other group, the direct message and 4 stay",
        );
        // for good: in Postgres, g1's cursor is past 3; g2's and the inbox's have not moved
        t.same(await cursor(b, g1), { acked: 3, above: [] }, "g1's cursor took 1, 2 and 3");
        t.same(await cursor(b, g2), { acked: 0, above: [] }, "g2's did not move");
        t.same(await cursor(b, null), { acked: 0, above: [] }, "nor the inbox's");
        t.equal(
          (await ack(base, b, first[0]!)).status,
          204,
          "a plain ack of a message already taken is still accepted",
        );
        t.equal((await ackThrough(b, third)).status, 204, "and so is the same cumulative ack again");
      },
    );

    t.test(
      "over HTTP: one ack of a direct message takes every earlier message of the caller's inbox, from anyone, and no group's",
      async (t) => {
        const a = await registerAgent(base, "A");
        const c = await registerAgent(base, "C");
        const b = await registerAgent(base, "B");
        const g = await group(a, [b]);
        const d1 = await sendOk(base, a, b.id, "a1");
        const d2 = await sendOk(base, c, b.id, "c1");
        const inGroup = await post(a, g, "group");
        const d3 = await sendOk(base, a, b.id, "a2");
        const d4 = await sendOk(base, c, b.id, "c2");
        t.notSame(d1.thread_id, d2.thread_id, "two direct threads");
        t.same(ids(await pending(base, b)), [d1.id, d2.id, inGroup, d3.id, d4.id], "all five delivered, oldest first");
        t.equal((await ackThrough(b, d3.id)).status, 204);
        t.same(
          ids(await pending(base, b)),
          [inGroup, d4.id],
          "a1, c1 (another thread) and a2 are gone; the group's and c2 stay",
        );
        t.same(
          await cursor(b, null),
          { acked: 3, above: [] },
          "the inbox cursor is past the third direct message, in Postgres",
        );
        t.same(await cursor(b, g), { acked: 0, above: [] }, "the group's did not move");
        t.equal((await ackThrough(b, d4.id, "false")).status, 204, "a plain ack of the last");
        t.same(await cursor(b, null), { acked: 4, above: [] });
        t.equal(
          (await ackThrough(b, d1.id)).status,
          204,
          "a cumulative ack of a message already taken is still accepted",
        );
        t.same(await cursor(b, null), { acked: 4, above: [] }, "and moves nothing back");
        t.equal((await ackThrough(a, d3.id)).status, 404, "the sender cannot acknowledge it");
        t.same(ids(await pending(base, b)), [inGroup]);
      },
    );

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
