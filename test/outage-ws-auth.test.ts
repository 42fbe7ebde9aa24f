// A WebSocket whose token cannot be checked because Postgres is out is told so (HTTP 503 at the upgrade, close
// 1013 "try again later" after an auth frame), not 4401 "invalid token": the client keeps its token and retries.
import t from "tap";
import WebSocket from "ws";
import { registerAgent } from "./helpers/http.ts";
import { uniqueName } from "./helpers/env.ts";
import { startTestNode } from "./helpers/node.ts";
import { PrivatePostgres } from "./helpers/private-servers.ts";
import { until } from "./helpers/wait.ts";

t.test("Postgres down: an uncached token is 'unavailable', never 'unauthorized'", async (t) => {
  const pg = await PrivatePostgres.start(t);
  const schema = uniqueName("wsauth");
  const env = { DATABASE_URL: pg.url, PG_SCHEMA: schema };
  // the token is issued (and cached) on node A; node B has never seen it, so it must ask Postgres
  const a = await startTestNode(t, { env, schema, engine: "memory" });
  const b = await startTestNode(t, { env, schema, engine: "memory" });
  const agent = await registerAgent(a.url, "agent");
  const wsUrl = `ws://127.0.0.1:${b.port}/v1/ws`;
  await pg.stop();

  // the token in the subprotocol: the upgrade answers 503
  const upgrade = await new Promise<number>((resolve, reject) => {
    const ws = new WebSocket(wsUrl, ["flock.json", `bearer.${agent.token}`]);
    ws.on("unexpected-response", (_req, res) => resolve(res.statusCode ?? 0));
    ws.on("open", () => reject(new Error("upgraded without checking the token")));
    ws.on("error", () => {});
  });
  t.equal(upgrade, 503, "the upgrade is refused as unavailable");

  // the token in an auth frame: an error frame 'unavailable', then close 1013
  const ws = new WebSocket(wsUrl, ["flock.json"]);
  const frames: { type: string; error?: string }[] = [];
  ws.on("message", (d) => frames.push(JSON.parse(d.toString()) as { type: string; error?: string }));
  await new Promise((r) => ws.once("open", r));
  ws.send(JSON.stringify({ type: "auth", token: agent.token }));
  const code = await new Promise<number>((r) => ws.once("close", (c) => r(c)));
  t.equal(code, 1013, "closed with 1013 (try again later), not 4401");
  t.same(
    frames.filter((f) => f.type === "error").map((f) => f.error),
    ["unavailable"],
  );

  // once Postgres is back, the same token connects
  await pg.restart();
  const upgradeAgain = () =>
    new Promise<number>((resolve) => {
      const w = new WebSocket(wsUrl, ["flock.json", `bearer.${agent.token}`]);
      w.on("unexpected-response", (_req, res) => resolve(res.statusCode ?? 0));
      w.on("open", () => {
        w.close();
        resolve(101);
      });
      w.on("error", () => {});
    });
  const statuses: number[] = [];
  const connects = async () => {
    statuses.push(await upgradeAgain());
    return statuses.at(-1) === 101;
  };
  // a paced client's retries (every 100 ms) until the circuit closes
  await until(connects, { ms: 10_000, every: 100, what: "the socket to connect again" });
  t.same(
    statuses.filter((s) => s !== 503 && s !== 101),
    [],
    `503 until the circuit closes, then 101 (${statuses.length} tries)`,
  );
});
