// delivery_count keeps counting when a mailbox is rebuilt (issue 17, item 2): a message delivered once and then
// lost with its mailbox says 2 on its next delivery, from the same node or another, while a message never
// delivered still says 1.
import t from "tap";
import { registerAgent } from "./helpers/http.ts";
import { deletePrefix, startTestNode } from "./helpers/node.ts";
import { pending, sendOk } from "./messaging-helpers.ts";

t.test("a rebuilt mailbox keeps counting", async (t) => {
  const one = await startTestNode(t);
  const two = await startTestNode(t, { schema: one.schema, prefix: one.prefix });
  const a = await registerAgent(one.url, "a");
  const b = await registerAgent(one.url, "b");

  const m1 = await sendOk(one.url, a, b.id, "1");
  t.same((await pending(one.url, b)).map((m) => m.delivery_count), [1], "first delivery");
  await deletePrefix(`${one.prefix}mb:`); // Redis lost every mailbox
  t.same((await pending(one.url, b)).map((m) => [m.id, m.delivery_count]), [[m1.id, 2]], "rebuilt on the same node: 2");
  t.same((await pending(one.url, b)).map((m) => m.delivery_count), [3]);

  // node one delivers, then dies with the count unwritten; node two rebuilds the lost mailbox
  const c = await registerAgent(one.url, "c");
  const m2 = await sendOk(one.url, a, c.id, "2");
  t.same((await pending(one.url, c)).map((m) => m.delivery_count), [1]);
  await deletePrefix(`${one.prefix}mb:`);
  const m3 = await sendOk(two.url, a, c.id, "3"); // arrives after the loss: in the new mailbox, never delivered
  t.same(
    (await pending(two.url, c)).map((m) => [m.id, m.delivery_count]),
    [
      [m2.id, 2],
      [m3.id, 1],
    ],
    "another node: the delivered one says 2 (its count had not reached Postgres), the new one 1",
  );
});
