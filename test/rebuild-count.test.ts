// delivery_count counts every hand-out, whichever node made it and whatever Redis lost (issue 17, item 2): what a
// principal was handed is in Postgres (its inbox cursor's delivered_seq, and handout_counts past a second hand-out),
// written before a long poll is answered, and set to "everything" while a socket takes the inbox live. A message
// never handed out still says 1.
import t from "tap";
import { inboxStream } from "../runtime/messaging/stream-id.ts";
import { LIVE } from "../runtime/messaging/stream-store.ts";
import { registerAgent } from "./helpers/http.ts";
import { deletePrefix, startTestNode } from "./helpers/node.ts";
import { ack, Client, pending, sendOk } from "./messaging-helpers.ts";
import { until } from "./helpers/wait.ts";

t.test("delivery counts carry on across nodes, a Redis loss and a socket", async (t) => {
  const one = await startTestNode(t);
  const two = await startTestNode(t, { schema: one.schema, prefix: one.prefix });
  const a = await registerAgent(one.url, "a");
  const b = await registerAgent(one.url, "b");
  const counts = async (url: string, who: typeof b) => (await pending(url, who)).map((m) => [m.id, m.delivery_count]);

  const m1 = await sendOk(one.url, a, b.id, "1");
  t.same(await counts(one.url, b), [[m1.id, 1]], "first delivery");
  t.same(await counts(two.url, b), [[m1.id, 2]], "on another node: 2");
  await deletePrefix(one.prefix); // Redis lost everything of both nodes
  t.same(await counts(one.url, b), [[m1.id, 3]], "after Redis lost everything: 3");
  const m2 = await sendOk(two.url, a, b.id, "2");
  t.same(
    await counts(two.url, b),
    [
      [m1.id, 4],
      [m2.id, 1],
    ],
    "a message never handed out says 1",
  );

  // a socket on node one takes c's inbox live: while it does, everything in the inbox may have been delivered
  const c = await registerAgent(one.url, "c");
  const w = await sendOk(one.url, a, c.id, "warm-up"); // c's inbox exists
  t.equal((await ack(one.url, c, w.id)).status, 204);
  const ws = await Client.open(one.url, { token: c.token });
  t.teardown(() => ws.close());
  await ws.nextOfType("ready");
  await until(() => one.svc.hub.streams.channels.published(inboxStream(c.id)) !== undefined);
  const m3 = await sendOk(two.url, a, c.id, "3");
  t.same([(await ws.nextOfType("message")).message.id], [m3.id], "the socket got it");
  t.same(await counts(two.url, c), [[m3.id, 2]], "a poll on another node meanwhile says 2");
  // closed cleanly: what was published to it stays counted, a message sent after it does not
  ws.close();
  await until(async () => {
    const [row] = await one.svc.sql<
      { d: string }[]
    >`select delivered_seq::text as d from stream_cursors where member = ${c.id} and thread_id = 0`;
    return row !== undefined && row.d !== LIVE;
  });
  const m4 = await sendOk(two.url, a, c.id, "4");
  t.same(
    await counts(two.url, c),
    [
      [m3.id, 3],
      [m4.id, 1],
    ],
    "the socket's delivery and the other poll's counted; the new one 1",
  );
});
