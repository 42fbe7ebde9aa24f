// A send whose connection to Postgres drops during its statement (issue 38, case 1): the node reads back what
// committed before it answers. Between the node and Postgres sits a TCP relay that, for the one request carrying a
// marker, either lets the statement reach Postgres and loses its answer (committed: the send must answer 201, and the
// message arrive once), or loses the statement itself (never committed: 503, and a retry with the same
// Idempotency-Key stores it once).
import { createServer, connect, type Socket } from "node:net";
import t, { type Test } from "tap";
import { call, registerAgent } from "./helpers/http.ts";
import { TEST_DATABASE_URL } from "./helpers/env.ts";
import { startTestNode } from "./helpers/node.ts";

type Trap = { marker: string; lose: "answer" | "statement"; fired: boolean };

/** A relay to the test Postgres that springs `trap` on the first packet from the node carrying its marker. */
async function relay(t: Test) {
  const pg = new URL(TEST_DATABASE_URL);
  const [host, pgPort] = [pg.hostname, Number(pg.port || 5432)];
  let trap: Trap | undefined;
  const sockets = new Set<Socket>();
  const server = createServer((client) => {
    const upstream = connect(pgPort, host);
    sockets.add(client).add(upstream);
    let sprung = false;
    const cut = () => {
      client.destroy();
      upstream.destroy();
    };
    client.on("data", (d) => {
      if (trap && !trap.fired && d.includes(trap.marker)) {
        trap.fired = true;
        if (trap.lose === "statement") return cut();
        sprung = true;
      }
      upstream.write(d);
    });
    upstream.on("data", (d) => {
      if (sprung) return cut(); // Postgres answered (after its commit): the node never hears it
      client.write(d);
    });
    client.on("error", cut).on("close", cut);
    upstream.on("error", cut).on("close", cut);
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  t.teardown(() => {
    for (const s of sockets) s.destroy();
    server.close();
  });
  const port = (server.address() as { port: number }).port;
  pg.host = `127.0.0.1:${port}`;
  return { url: pg.toString(), arm: (x: Omit<Trap, "fired">) => (trap = { ...x, fired: false }), trap: () => trap };
}

t.test("a send whose commit's answer is lost answers what happened", async (t) => {
  const r = await relay(t);
  const node = await startTestNode(t, { env: { DATABASE_URL: r.url } });
  const a = await registerAgent(node.url, "a");
  const b = await registerAgent(node.url, "b");
  const send = (body: string, key: string) =>
    call(node.url, "POST", "/v1/messages", {
      token: a.token,
      json: { to: b.id, body },
      headers: { "idempotency-key": key },
    });
  const bodies = async () => {
    const p = await call(node.url, "GET", "/v1/messages/pending?timeout=0&limit=100", { token: b.token });
    return (p.body.messages as { body: string }[]).map((m) => m.body);
  };
  t.equal((await send("warm-up", "k0")).status, 201);

  // the statement commits, its answer is lost: the node reads back, finds it, and answers 201
  const committed = `committed-${process.pid}-${Date.now()}`;
  r.arm({ marker: committed, lose: "answer" });
  const got = await send(committed, "k1");
  t.ok(r.trap()?.fired, "the relay lost the answer");
  t.equal(got.status, 201, `a committed send answers 201: ${got.text}`);
  t.equal(got.body.body, committed);
  t.same(
    (await bodies()).filter((x) => x === committed),
    [committed],
    "stored once",
  );

  // the statement never reaches Postgres: 503, nothing stored; the retry with the key stores it once
  const lost = `lost-${process.pid}-${Date.now()}`;
  r.arm({ marker: lost, lose: "statement" });
  const refused = await send(lost, "k2");
  t.ok(r.trap()?.fired, "the relay lost the statement");
  t.equal(refused.status, 503, refused.text);
  t.same(
    (await bodies()).filter((x) => x === lost),
    [],
    "a 503'd send is not stored",
  );
  const retry = await send(lost, "k2");
  t.equal(retry.status, 201, retry.text);
  t.same(
    (await bodies()).filter((x) => x === lost),
    [lost],
    "stored once, by the retry",
  );
});
