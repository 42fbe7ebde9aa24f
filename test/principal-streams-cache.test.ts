// Which streams a principal's long polls wait on and its sockets take (StreamDelivery.streamsOf: its inbox, then its
// groups): learnt once per node, then answered from memory. A join or leave through the API tells every node at once;
// past GROUPS_TTL_MS (the net under a lost membership event) the node reads them again behind the answer, so a poll
// never waits on that read, and a sweep checks the sockets' streams against Postgres. What a poll hands out is read
// from every cursor Postgres holds for the principal, so a missed join shows there at once. The node's clock is driven
// by hand.
import t from "tap";
import { GROUPS_TTL_MS } from "../runtime/messaging/streams.ts";
import { groupStream, inboxStream, type StreamId } from "../runtime/messaging/stream-id.ts";
import { parseId } from "../runtime/ids.ts";
import { call, type Registered, registerAgent } from "./helpers/http.ts";
import { startTestNode } from "./helpers/node.ts";
import { Client, createGroup, pending, postToGroup, sendOk } from "./messaging-helpers.ts";
import { until } from "./helpers/wait.ts";

t.test(
  "a long poll reads every stream Postgres holds, and learns to wait on a missed join behind the answer",
  async (t) => {
    let skew = 0;
    const node = await startTestNode(t, {
      engine: "redis",
      now: () => Date.now() + skew,
      env: { FLOCK_LIMITS_SCALE: "100" },
    });
    const base = node.url;
    const group = (owner: Registered, members: Registered[]) => createGroup(base, owner, members);
    const post = (from: Registered, g: string, body: string) => postToGroup(base, from, g, body);
    const bodies = async (who: Registered) => (await pending(base, who)).map((m: { body: string }) => m.body).sort();
    /** The streams the node knows `who` reads: the inbox first, then the groups (in no particular order). */
    const known = async (who: Registered) => {
      const [first, ...rest] = await node.svc.hub.streams.streamsOf(who.id);
      return [first, ...rest.sort()];
    };

    const a = await registerAgent(base, "Ann");
    const b = await registerAgent(base, "Ben");
    const c = await registerAgent(base, "Cy");
    const first = await group(a, [b]);
    await post(a, first, "in the first");
    t.same(await bodies(b), ["in the first"], "the first poll learns the principal's groups");
    const firstThread = groupStream(parseId("group", first)!);
    t.same(await known(b), [inboxStream(b.id), firstThread], "its inbox first (no direct message yet), then its group");
    t.same(await known(c), [inboxStream(c.id)], "one in no group reads its inbox alone");

    // b joins a second group behind the node's back: no membership event, as if it were lost
    const second = await group(a, [c]);
    const thread = String(parseId("group", second));
    await node.svc.sql`insert into thread_members (thread_id, principal) values (${thread}, ${b.id})`;
    await node.svc.sql`
    insert into stream_cursors (member, thread_id, acked_seq, joined_seq, delivered_seq)
    select ${b.id}, id, last_seq, last_seq, last_seq from groups where id = ${thread}`;
    await post(a, second, "in the second");

    t.same(
      await bodies(b),
      ["in the first", "in the second"],
      "the read takes every cursor Postgres holds, a missed join's too",
    );
    t.same(
      await known(b),
      [inboxStream(b.id), firstThread],
      "within GROUPS_TTL_MS the node waits on the groups it knows",
    );
    await sendOk(base, c, b.id, "direct");
    t.same(await bodies(b), ["direct", "in the first", "in the second"], "the inbox is read with them");
    skew += GROUPS_TTL_MS + 1;
    t.same(await bodies(b), ["direct", "in the first", "in the second"], "past it, the poll still answers at once");
    await until(async () => (await known(b)).length === 3);
    t.same(
      await known(b),
      [inboxStream(b.id), ...[firstThread, groupStream(BigInt(thread))].sort()],
      "the read behind it learns the missed group",
    );

    // a leave through the API is known at once, whatever the clock
    const left = await call(base, "DELETE", `/v1/groups/${first}/members/${b.id}`, { token: a.token });
    t.equal(left.status, 204);
    t.same(await bodies(b), ["direct", "in the second"], "a leave through the API is known at the next poll");
    t.same(await known(b), [inboxStream(b.id), groupStream(BigInt(thread))], "the inbox stays");
  },
);

t.test(
  "a socket follows a membership change whose event was lost at the next sweep, not its next reconnect",
  async (t) => {
    const node = await startTestNode(t, { engine: "redis", env: { FLOCK_LIMITS_SCALE: "100" } });
    const base = node.url;
    const groups = node.svc.hub.streams;
    const a = await registerAgent(base, "Ann");
    const b = await registerAgent(base, "Ben");
    const make = (name: string) => createGroup(base, a, [b], name);
    const post = (g: string, body: string) => postToGroup(base, a, g, body);
    const g = await make("g");
    const marker = await make("marker");
    const thread = String(parseId("group", g));
    const live = (stream: StreamId) => groups.channels.published(stream) !== undefined;
    const inbox = inboxStream(b.id);
    const gStream = groupStream(BigInt(thread));
    const c = await Client.open(base, { token: b.token });
    t.teardown(() => c.close());
    await c.nextOfType("ready");
    await until(() => live(inbox) && live(gStream) && live(groupStream(parseId("group", marker)!)));
    const body = (f: { type: string; message?: { body: string } }) =>
      f.type === "message" ? f.message!.body : undefined;

    // b leaves g behind the node's back: no membership event
    await node.svc.sql`delete from stream_cursors where member = ${b.id} and thread_id = ${thread}`;
    await node.svc.sql`delete from thread_members where principal = ${b.id} and thread_id = ${thread}`;
    await post(g, "lost event");
    t.equal(
      body(await c.next((f) => f.type === "message")),
      "lost event",
      "without the event the socket still takes the group",
    );
    await groups.sweep();
    await post(g, "after the sweep");
    await post(marker, "marker 1");
    t.equal(body(await c.next((f) => f.type === "message")), "marker 1", "after the sweep it does not");
    t.ok(live(inbox), "the sweep leaves the inbox alone");
    await sendOk(base, a, b.id, "direct");
    t.equal(body(await c.next((f) => f.type === "message")), "direct", "direct messages still come live");

    // and joins back behind the node's back
    await node.svc.sql`insert into thread_members (thread_id, principal) values (${thread}, ${b.id})`;
    await node.svc.sql`
    insert into stream_cursors (member, thread_id, acked_seq, joined_seq, delivered_seq)
    select ${b.id}, id, last_seq, last_seq, last_seq from groups where id = ${thread}`;
    await groups.sweep();
    await until(() => live(gStream));
    await post(g, "back");
    t.equal(body(await c.next((f) => f.type === "message")), "back", "the sweep takes the group again");
  },
);
