// A WebSocket ack refused while Postgres is out (error frame `unavailable`) is retried by the node on the same
// socket once Postgres is back (issue 38, case 2): the client gets its ack frame within about a second of the
// recovery without acking again or reconnecting, and the message is not handed out again.
import t from "tap";
import { call } from "./helpers/http.ts";
import { nodeOnPrivatePostgres } from "./helpers/node.ts";
import { Client, sendOk } from "./messaging-helpers.ts";

t.test("a refused ack takes once Postgres is back, on the same socket", async (t) => {
  const { pg, node, a, b } = await nodeOnPrivatePostgres(t, "wsackretry");
  const ws = await Client.open(node.url, { token: b.token });
  t.teardown(() => ws.close());
  await ws.nextOfType("ready");
  const id = (await sendOk(node.url, a, b.id, "ack me")).id as string;
  const got = await ws.next((f) => f.type === "message" && f.message.id === id);
  t.equal(got.message.delivery_count, 1);

  await pg.stop();
  ws.send({ type: "ack", id, ref: "r1" });
  const refused = await ws.next((f) => f.type === "error" && f.ref === "r1");
  t.equal(refused.error, "unavailable");
  await pg.restart();
  const back = performance.now();
  const acked = await ws.next((f) => f.type === "ack" && f.ref === "r1", 10_000);
  const took = performance.now() - back;
  t.equal(acked.id, id);
  t.ok(took < 2000, `acknowledged ${Math.round(took)} ms after Postgres was back (within 2 s)`);
  t.equal(ws.closed, null, "the same socket");
  const pending = await call(node.url, "GET", "/v1/messages/pending?timeout=0", { token: b.token });
  t.same(pending.body.messages, [], "acknowledged for good: not handed out again");
});
