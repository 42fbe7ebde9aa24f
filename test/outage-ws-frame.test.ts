// A WebSocket frame that needs a backend which is out of reach is answered like an HTTP request would be: an error
// frame `unavailable` (the HTTP 503), never `internal`. Seen in the chaos suite's postgres-stop:
// every WebSocket ack taken during the outage answered `internal`.
import t from "tap";
import { nodeOnPrivatePostgres } from "./helpers/node.ts";
import { until } from "./helpers/wait.ts";
import { Client, sendOk } from "./messaging-helpers.ts";

t.test("Postgres down: a WebSocket ack answers unavailable, and succeeds once Postgres is back", async (t) => {
  const { pg, node, a, b } = await nodeOnPrivatePostgres(t, "wsout");
  const c = await Client.open(node.url, { token: b.token });
  t.teardown(() => c.ws.close());
  await c.next((f) => f.type === "ready");
  const m = await sendOk(node.url, a, b.id, "before");
  await c.next((f) => f.type === "message" && f.message.id === m.id);

  await pg.stop();
  const started = performance.now();
  c.send({ type: "ack", id: m.id, ref: "down" });
  const err = await c.next((f) => f.type === "error" && f.ref === "down");
  t.equal(err.error, "unavailable", `the error frame: ${JSON.stringify(err)}`);
  t.match(err.message, /Postgres is unavailable/);
  t.ok(performance.now() - started < 2000, "within 2 s");

  await pg.restart();
  const answers: string[] = [];
  const ackOnce = async () => {
    const ref = `up${answers.length}`;
    c.send({ type: "ack", id: m.id, ref });
    const f = await c.next((f) => (f.type === "ack" || f.type === "error") && f.ref === ref);
    answers.push(f.type === "ack" ? "ack" : String(f.error));
    return f.type === "ack";
  };
  // a paced client's retries (every 100 ms) until the circuit closes
  await until(ackOnce, { ms: 10_000, every: 100, what: "the ack to go through" });
  t.same(
    answers.filter((a) => a !== "unavailable" && a !== "ack"),
    [],
    `unavailable until the circuit closes, then acked (${answers.length} tries)`,
  );
});
