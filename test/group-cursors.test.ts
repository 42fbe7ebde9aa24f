// Group messages stored once (migration 0010; runtime/messaging/streams.ts and stream-store.ts), end to end over real
// sockets, on both engines: a member's cursor (plain acks in any order, cumulative acks), who may see and acknowledge
// what, live delivery by topic after a catch-up from Postgres, redelivery counts, a message whose publish never
// happened, and two nodes.
import t from "tap";
import { parseId } from "../runtime/ids.ts";
import { groupStream } from "../runtime/messaging/stream-id.ts";
import { call, type Registered, registerAgent } from "./helpers/http.ts";
import { type EngineKind, startTestNode } from "./helpers/node.ts";
import { ack, Client, createGroup, pending, postToGroup } from "./messaging-helpers.ts";
import { until } from "./helpers/wait.ts";

const threadOf = (groupId: string) => parseId("group", groupId)!;
/** A group's stream (the key of its channel on a node). */
const groupKey = (groupId: string) => groupStream(threadOf(groupId));

for (const engine of ["redis", "memory"] as EngineKind[]) {
  t.test(`group messages stored once (${engine} engines)`, async (t) => {
    const node = await startTestNode(t, { engine, env: { FLOCK_LIMITS_SCALE: "100" } });
    const base = node.url;
    const hub = node.svc.hub;

    const group = (owner: Registered, members: Registered[]) => createGroup(base, owner, members);
    const post = (from: Registered, g: string, body: string) => postToGroup(base, from, g, body);
    const ids = (ms: { id: string }[]) => ms.map((m) => m.id);
    const cursor = async (member: Registered, g: string) => {
      const [row] = await node.svc.sql<{ acked_seq: string }[]>`
        select acked_seq from stream_cursors where member = ${member.id} and thread_id = ${String(threadOf(g))}`;
      return row === undefined ? undefined : Number(row.acked_seq);
    };

    t.test(
      "plain acks in any order move the cursor over every run they complete; nothing is stored per member",
      async (t) => {
        const a = await registerAgent(base, "Ann");
        const b = await registerAgent(base, "Ben");
        const g = await group(a, [b]);
        const m = [await post(a, g, "1"), await post(a, g, "2"), await post(a, g, "3"), await post(a, g, "4")];
        const stored = await node.svc.sql<{ recipient: string | null; seq: string }[]>`
        select recipient, seq::text from messages where id = any(${m.map((x) => x.slice(4))}::bigint[]) order by seq`;
        t.same(
          stored.map((r) => [r.recipient, r.seq]),
          [
            [null, "1"],
            [null, "2"],
            [null, "3"],
            [null, "4"],
          ],
          "each stored once, numbered in the group",
        );
        const [counts] = await node.svc.sql<
          { n: number }[]
        >`select count(*)::int as n from handout_counts where member = ${b.id}`;
        t.equal(counts!.n, 0, "nothing handed out yet, nothing counted");
        t.same(ids(await pending(base, b)), m);
        t.equal((await ack(base, b, m[2]!)).status, 204);
        t.equal(await cursor(b, g), 0, "3 is kept above the cursor");
        t.same(ids(await pending(base, b)), [m[0], m[1], m[3]]);
        t.equal((await ack(base, b, m[0]!)).status, 204);
        t.equal(await cursor(b, g), 1);
        t.equal((await ack(base, b, m[1]!)).status, 204);
        t.equal(await cursor(b, g), 3, "2 completes the run up to 3");
        t.same(ids(await pending(base, b)), [m[3]]);
        const [kept] = await node.svc.sql<
          { n: number }[]
        >`select count(*)::int as n from stream_acks where member = ${b.id}`;
        t.equal(kept!.n, 0, "the out-of-order ack was taken into the cursor");
        t.equal((await ack(base, b, m[1]!)).status, 204, "acking again is still accepted");
        t.equal((await call(base, "POST", `/v1/messages/${m[3]}/ack?through=true`, { token: b.token })).status, 204);
        t.same(await pending(base, b), []);
      },
    );

    t.test("acks arriving together, in any order (one batch or several), leave the cursor past them all", async (t) => {
      const a = await registerAgent(base, "Ann");
      const b = await registerAgent(base, "Ben");
      const c = await registerAgent(base, "Cy");
      const g = await group(a, [b, c]);
      const m: string[] = [];
      for (let i = 0; i < 6; i++) m.push(await post(a, g, `m${i}`));
      const order = [3, 0, 5, 1, 4, 2];
      const acks = await Promise.all([...order.map((i) => ack(base, b, m[i]!)), ack(base, c, m[5]!)]);
      t.same(
        acks.map((r) => r.status),
        Array(7).fill(204),
      );
      t.equal(await cursor(b, g), 6);
      t.equal(await cursor(c, g), 0, "c's plain ack of the last waits above its cursor");
      t.same(ids(await pending(base, c)), m.slice(0, 5));
      const [left] = await node.svc.sql<
        { n: number }[]
      >`select count(*)::int as n from stream_acks where member = ${b.id}`;
      t.equal(left!.n, 0);
      const remembered = await node.svc.engines.streamCursors.read(b.id, [threadOf(g)]);
      t.same(remembered.get(threadOf(g)), { acked: 6, above: [] }, "and the engine remembers where the cursor is");
    });

    t.test(
      "the sender's own message is not theirs to receive or acknowledge; a late member sees only what follows",
      async (t) => {
        const a = await registerAgent(base, "Ann");
        const b = await registerAgent(base, "Ben");
        const late = await registerAgent(base, "Lia");
        const g = await group(a, [b]);
        const before = await post(a, g, "before");
        t.same(await pending(base, a), [], "the sender has nothing pending");
        t.equal(
          (await ack(base, a, before)).status,
          204,
          "acking its own (its sockets get it from the group's topic) changes nothing",
        );
        t.same(await pending(base, a), []);
        t.equal(
          (await call(base, "POST", `/v1/groups/${g}/members`, { token: a.token, json: { members: [late.id] } }))
            .status,
          200,
        );
        const after = await post(b, g, "after");
        t.same(ids(await pending(base, late)), [after], "only what came after joining");
        t.equal((await ack(base, late, before)).status, 404, "the earlier one is not theirs");
        t.equal(
          (await call(base, "POST", `/v1/messages/${before}/ack?through=true`, { token: late.token })).status,
          404,
        );
        t.same(ids(await pending(base, a)), [after], "the owner receives the others' messages");
        const outsider = await registerAgent(base, "Out");
        t.equal((await ack(base, outsider, after)).status, 404, "a non-member gets 404");
        // leaving: the cursor goes, and with it what was pending
        t.equal((await call(base, "DELETE", `/v1/groups/${g}/members/${late.id}`, { token: late.token })).status, 204);
        t.same(await pending(base, late), []);
        t.equal(await cursor(late, g), undefined);
      },
    );

    t.test(
      "a socket catches up past its cursor, then takes the group live; reconnecting redelivers what it did not ack",
      async (t) => {
        const a = await registerAgent(base, "Ann");
        const b = await registerAgent(base, "Ben");
        const g = await group(a, [b]);
        const old = [await post(a, g, "o1"), await post(a, g, "o2")];
        const c = await Client.open(base, { token: b.token });
        t.teardown(() => c.close());
        await c.nextOfType("ready");
        const caught = [(await c.nextOfType("message")).message, (await c.nextOfType("message")).message];
        t.same(ids(caught), old, "the backlog, in order");
        t.same(
          caught.map((m) => m.delivery_count),
          [1, 1],
        );
        await until(() => hub.streams.channels.published(groupKey(g)) !== undefined);
        const live = [await post(a, g, "l1"), await post(a, g, "l2"), await post(a, g, "l3")];
        const got = [];
        for (let i = 0; i < 3; i++) got.push((await c.nextOfType("message")).message);
        t.same(ids(got), live, "then live, in order");
        t.same(
          got.map((m) => m.delivery_count),
          [1, 1, 1],
        );
        // a cumulative ack over the WebSocket takes everything up to l1
        c.send({ type: "ack", id: live[0], through: true, ref: "r" });
        t.same(await c.nextOfType("ack"), { type: "ack", id: live[0], ref: "r" });
        t.equal(await cursor(b, g), 3);
        c.close();
        await until(() => hub.streams.channels.published(groupKey(g)) === undefined);
        // closed cleanly: what was published to it counts as delivered; a message sent meanwhile does not
        const meanwhile = await post(a, g, "m");
        const c2 = await Client.open(base, { token: b.token });
        t.teardown(() => c2.close());
        await c2.nextOfType("ready");
        const again = [];
        for (let i = 0; i < 3; i++) again.push((await c2.nextOfType("message")).message);
        t.same(ids(again), [live[1], live[2], meanwhile], "past the cursor only");
        t.same(
          again.map((m) => m.delivery_count),
          [2, 2, 1],
          "a redelivery says so",
        );
      },
    );

    t.test(
      "a message whose publish never happened reaches live sockets: by the gap it leaves, or published again",
      async (t) => {
        const a = await registerAgent(base, "Ann");
        const b = await registerAgent(base, "Ben");
        const g = await group(a, [b]);
        const thread = threadOf(g);
        const c = await Client.open(base, { token: b.token });
        t.teardown(() => c.close());
        await c.nextOfType("ready");
        await until(() => hub.streams.channels.published(groupStream(thread)) !== undefined);
        // stored as a send stores it, and never published (its sender "died" between the commit and the publish)
        const storeOnly = async (body: string) => {
          const m = {
            id: node.svc.ids.nextRaw(),
            threadId: thread,
            sender: a.id,
            body,
            createdAt: new Date(),
            attachments: [],
          };
          t.equal(typeof (await hub.storeGroup(m)), "number");
          return `msg_${m.id}`;
        };
        const lost = await storeOnly("lost");
        const next = await post(a, g, "next"); // published: this node sees the gap before it
        await hub.streams.channels.fillGaps();
        t.same(
          [(await c.nextOfType("message")).message.id, (await c.nextOfType("message")).message.id],
          [lost, next],
          "in order",
        );
        const trailing = await storeOnly("trailing"); // nothing follows it: no gap to see
        // the position check finds the group behind Postgres at two checks in a row (the first call may join a check
        // that started before the commit: three calls make two that started after it), and fills the socket's channel
        for (let i = 0; i < 3; i++) await hub.streams.check.pass();
        t.equal((await c.nextOfType("message")).message.id, trailing);
        t.same(ids(await pending(base, b)), [lost, next, trailing], "and a long poll reads all three from Postgres");
      },
    );

    t.test("a long poll's page keeps each group in its numbers' order, even where ids run the other way", async (t) => {
      const a = await registerAgent(base, "Ann");
      const b = await registerAgent(base, "Ben");
      const g = await group(a, [b]);
      const thread = threadOf(g);
      // two sends whose ids were taken in one order and committed in the other (as two racing sends can)
      const early = node.svc.ids.nextRaw();
      const late = node.svc.ids.nextRaw();
      for (const id of [late, early]) {
        t.equal(
          typeof (await hub.storeGroup({
            id,
            threadId: thread,
            sender: a.id,
            body: String(id),
            createdAt: new Date(),
            attachments: [],
          })),
          "number",
        );
      }
      const direct = await call(base, "POST", "/v1/messages", { token: a.token, json: { to: b.id, body: "direct" } });
      t.same(
        ids(await pending(base, b, "timeout=0&limit=1")),
        [`msg_${late}`],
        "number 1 first, though its id is the larger",
      );
      t.same(ids(await pending(base, b, "timeout=0&limit=3")), [`msg_${late}`, `msg_${early}`, direct.body.id]);
      // a cumulative ack of the first of the page takes nothing it did not get
      t.equal((await call(base, "POST", `/v1/messages/msg_${late}/ack?through=true`, { token: b.token })).status, 204);
      t.same(ids(await pending(base, b, "timeout=0&limit=3")), [`msg_${early}`, direct.body.id]);
    });

    t.test("a member added while connected takes the group at once; a member removed stops receiving it", async (t) => {
      const a = await registerAgent(base, "Ann");
      const b = await registerAgent(base, "Ben");
      const x = await registerAgent(base, "Xia");
      const g = await group(a, [b]);
      const c = await Client.open(base, { token: x.token });
      t.teardown(() => c.close());
      await c.nextOfType("ready");
      t.equal(
        (await call(base, "POST", `/v1/groups/${g}/members`, { token: a.token, json: { members: [x.id] } })).status,
        200,
      );
      await until(() => hub.streams.channels.published(groupKey(g)) !== undefined);
      const first = await post(b, g, "hi");
      t.equal((await c.nextOfType("message")).message.id, first);
      t.equal((await call(base, "DELETE", `/v1/groups/${g}/members/${x.id}`, { token: a.token })).status, 204);
      await until(() => hub.streams.channels.published(groupKey(g)) === undefined);
      await post(b, g, "gone");
      const direct = await call(base, "POST", "/v1/messages", {
        token: a.token,
        json: { to: x.id, body: "still here" },
      });
      t.equal((await c.nextOfType("message")).message.id, direct.body.id, "the next message it gets is a direct one");
    });
  });
}

// (the waits for frames are generous: two nodes in one process on a loaded machine; this proves order, not speed)
t.test("two nodes: a group message sent on one reaches a socket on the other, live and in order", async (t) => {
  const one = await startTestNode(t, { env: { FLOCK_LIMITS_SCALE: "100" } });
  const two = await startTestNode(t, { schema: one.schema, prefix: one.prefix, env: { FLOCK_LIMITS_SCALE: "100" } });
  const a = await registerAgent(one.url, "Ann");
  const b = await registerAgent(one.url, "Ben");
  const g = await call(one.url, "POST", "/v1/groups", { token: a.token, json: { name: "g", members: [b.id] } });
  const gid = g.body.group.id as string;
  const c = await Client.open(two.url, { token: b.token });
  t.teardown(() => c.close());
  await c.nextOfType("ready");
  await until(() => two.svc.hub.streams.channels.published(groupKey(gid)) !== undefined);
  const sent = [];
  for (let i = 0; i < 5; i++) {
    const r = await call(i % 2 === 0 ? one.url : two.url, "POST", `/v1/groups/${gid}/messages`, {
      token: a.token,
      json: { body: `m${i}` },
    });
    sent.push(r.body.id as string);
  }
  const got = [];
  for (let i = 0; i < 5; i++) got.push((await c.nextOfType("message", 10_000)).message.id);
  t.same(got, sent);
  // a member added on node one: its socket on node two takes the group at once
  const x = await registerAgent(one.url, "Xia");
  const cx = await Client.open(two.url, { token: x.token });
  t.teardown(() => cx.close());
  await cx.nextOfType("ready");
  t.equal(
    (await call(one.url, "POST", `/v1/groups/${gid}/members`, { token: a.token, json: { members: [x.id] } })).status,
    200,
  );
  // (however far the membership event and x's catch-up on node two have got, the message reaches x exactly once)
  const after = await call(one.url, "POST", `/v1/groups/${gid}/messages`, { token: a.token, json: { body: "to x" } });
  t.equal((await cx.nextOfType("message", 10_000)).message.id, after.body.id);
});
