// The round-trip budget of the hot path (docs/ARCHITECTURE.md, "The round-trip budget"): what each operation costs in
// Postgres statements and Redis commands, counted on the wire by proxies between a node and the real servers
// (test/helpers/round-trips.ts), one warm operation at a time. Each count is exact: adding a statement or a command
// to a path fails its line. What runs on the node's timers (its lease, its release's announcement) is left out by
// name, and so is what an operation does only the first time (a prepared statement, a script loaded, a cache filled):
// every operation runs once before it is counted.
import { randomUUID } from "node:crypto";
import t from "tap";
import { TEST_DATABASE_URL, TEST_REDIS_URL } from "./helpers/env.ts";
import { call, ok, type Registered, registerAgent } from "./helpers/http.ts";
import { startTestNode } from "./helpers/node.ts";
import { type Call, countingProxies } from "./helpers/round-trips.ts";
import { befriend, post } from "./helpers/social.ts";
import { until } from "./helpers/wait.ts";
import { Client, createGroup } from "./messaging-helpers.ts";

/**
 * What runs on the node's timers whatever request runs meanwhile: its lease and its release's announcement (Redis),
 * the position check (runtime/messaging/position-check.ts: the streams' newest numbers) and the membership sweep (Postgres).
 */
const BACKGROUND = new Set(["nodeRenew", "nodeAnnounce", "layoutRaise", "nodeAcquire"]);
const BACKGROUND_SQL = [
  "select i.principal, null::text as group_id, i.last_seq::text as last",
  "select member, thread_id from stream_cursors where member = any(",
];

/** A Redis command's name, a script by its file's (`streamAppend`). */
const command = (c: Call) => c.label.replace(/^EVAL(SHA)? /, "");
const background = (c: Call, redis: boolean) =>
  redis ? BACKGROUND.has(command(c)) : BACKGROUND_SQL.some((p) => c.label.startsWith(p));

/**
 * The budget, held exactly: per operation, its Postgres statements and its Redis commands (whether before its answer
 * or after it; the path tests below say which wait). docs/ARCHITECTURE.md, "The round-trip budget", has the same table.
 */
export const BUDGET: Record<string, { pg: number; redis: string[] }> = {
  "direct send": { pg: 1, redis: ["take", "streamAppend"] },
  "direct send, keyed": { pg: 1, redis: ["take", "streamAppend"] },
  "group send, keyed, a member's socket live": { pg: 1, redis: ["take", "streamAppend"] },
  "long poll, a message waiting": { pg: 1, redis: [] },
  "long poll that waits, woken by a direct send": { pg: 3, redis: ["take", "streamAppend"] },
  ack: { pg: 1, redis: ["streamCursorMerge"] },
  "direct send to a live socket, delivered": { pg: 1, redis: ["take", "streamAppend"] },
  "ack over the WebSocket, answered": { pg: 1, redis: ["streamCursorMerge"] },
  // the moments policy, the duplicate-text bucket and (an account in its first hour) the new-account one; behind, the
  // moment's announcement to the connections that may see it (the `moment` frame)
  "post, to 1 friend": { pg: 4, redis: ["take", "take", "take", "feedPushMany", "PUBLISH"] },
  // behind the answer, the new counts' announcement (the `moment_counts` frame)
  like: { pg: 1, redis: ["momentsStore", "PUBLISH"] },
  // the missing records, then which of the page the reader liked (`liked_by_me`, one statement for the page)
  "feed read": { pg: 2, redis: ["feedPage", "momentsStore"] },
};

/** What an operation cost: Postgres statements and Redis commands, each by its label. */
interface Cost {
  pg: string[];
  redis: string[];
}

t.test("the round-trip budget of each operation on the hot path", async (t) => {
  const pgUrl = new URL(TEST_DATABASE_URL);
  const redisUrl = new URL(TEST_REDIS_URL);
  const px = await countingProxies(
    { host: pgUrl.hostname, port: Number(pgUrl.port || 5432) },
    { host: redisUrl.hostname, port: Number(redisUrl.port || 6379) },
  );
  t.teardown(() => Promise.all([px.postgres.close(), px.redis.close()]));
  pgUrl.host = `127.0.0.1:${px.postgres.port}`;
  redisUrl.host = `127.0.0.1:${px.redis.port}`;
  const node = await startTestNode(t, {
    env: { DATABASE_URL: pgUrl.toString(), REDIS_URL: redisUrl.toString(), FLOCK_LIMITS_SCALE: "1000" },
  });
  const base = node.url;
  const [a, b, c] = [await registerAgent(base, "a"), await registerAgent(base, "b"), await registerAgent(base, "c")];
  await befriend(base, a, b);
  const group = await createGroup(base, a, [b, c]);
  const socket = await Client.open(base, { token: c.token });
  t.teardown(() => socket.close());
  await socket.nextOfType("ready");

  /** Until neither proxy has seen a call for 100 ms (what follows an answer, written behind it, has gone out). */
  const quiet = async () => {
    let seen = -1;
    await until(
      async () => {
        const now = px.postgres.calls.length + px.redis.calls.length;
        const still = now === seen;
        seen = now;
        if (!still) await new Promise((r) => setTimeout(r, 100));
        return still;
      },
      { what: "the node quiet", every: 1 },
    );
  };
  /** Runs `op` on a quiet node, and counts what it sent until the node is quiet again (what follows an answer too). */
  const cost = async (op: () => Promise<unknown>): Promise<Cost> => {
    await quiet();
    const p0 = px.postgres.calls.length;
    const r0 = px.redis.calls.length;
    await op();
    await quiet();
    return {
      pg: px.postgres
        .since(p0)
        .filter((x) => !background(x, false))
        .map((x) => x.label),
      redis: px.redis
        .since(r0)
        .filter((x) => !background(x, true))
        .map(command),
    };
  };
  const keyed = () => ({ "idempotency-key": randomUUID() });
  const sendTo = (to: Registered, headers: Record<string, string> = {}) =>
    ok(call(base, "POST", "/v1/messages", { token: a.token, json: { to: to.id, body: "hi" }, headers }), 201);
  const sendGroup = () =>
    ok(
      call(base, "POST", `/v1/groups/${group}/messages`, { token: a.token, json: { body: "hi" }, headers: keyed() }),
      201,
    );
  const pending = async (who: Registered, query = "timeout=0") =>
    (await ok(call(base, "GET", `/v1/messages/pending?${query}`, { token: who.token }), 200)) as unknown as {
      body: { messages: { id: string }[] };
    };
  const ackAll = async (who: Registered) => {
    for (const m of (await pending(who)).body.messages)
      await ok(call(base, "POST", `/v1/messages/${m.id}/ack?through=true`, { token: who.token }), 204);
  };
  let moment = "";

  // warm: every path once (statements prepared, scripts loaded, caches and the pair's thread made)
  for (let i = 0; i < 2; i++) {
    await sendTo(b);
    await sendTo(b, keyed());
    await sendGroup();
    await ackAll(b);
    moment = (await post(base, a, "friends")).id;
    await call(base, "POST", `/v1/moments/${moment}/like`, { token: b.token });
    await call(base, "GET", "/v1/moments/feed?limit=20", { token: b.token });
    await sendTo(c);
    await ackAll(c);
  }

  const costs: Record<string, Cost> = {};
  costs["direct send"] = await cost(() => sendTo(b));
  costs["direct send, keyed"] = await cost(() => sendTo(b, keyed()));
  await ackAll(b);
  costs["group send, keyed, a member's socket live"] = await cost(async () => {
    const sent = (await sendGroup()) as unknown as { body: { id: string } };
    await socket.next((f) => f.type === "message" && f.message.id === sent.body.id);
  });
  await sendTo(b);
  costs["long poll, a message waiting"] = await cost(() => pending(b));
  const [waiting] = (await pending(b)).body.messages;
  costs["ack"] = await cost(() => ok(call(base, "POST", `/v1/messages/${waiting!.id}/ack`, { token: b.token }), 204));
  await ackAll(b);
  costs["long poll that waits, woken by a direct send"] = await cost(async () => {
    const polled = pending(b, "timeout=10");
    await until(() => node.svc.hub.queued().polls === 1, { what: "the poll waiting", every: 5 });
    await sendTo(b);
    return polled;
  });
  await ackAll(b);
  let delivered = "";
  costs["direct send to a live socket, delivered"] = await cost(async () => {
    const sent = (await sendTo(c)) as unknown as { body: { id: string } };
    delivered = sent.body.id;
    await socket.next((f) => f.type === "message" && f.message.id === delivered);
  });
  costs["ack over the WebSocket, answered"] = await cost(async () => {
    socket.send({ type: "ack", id: delivered, through: true, ref: "r1" });
    await socket.next((f) => f.type === "ack" && f.ref === "r1");
  });
  costs["post, to 1 friend"] = await cost(async () => {
    moment = (await post(base, a, "friends")).id;
  });
  costs["like"] = await cost(() => ok(call(base, "POST", `/v1/moments/${moment}/like`, { token: b.token }), 204));
  costs["feed read"] = await cost(() => ok(call(base, "GET", "/v1/moments/feed?limit=20", { token: b.token }), 200));
  for (const [op, c] of Object.entries(costs)) {
    const want = BUDGET[op]!;
    const statements = c.pg.map((l) => l.slice(0, 60)).join(" | ");
    t.equal(c.pg.length, want.pg, `${op}: ${want.pg} Postgres statements (${statements})`);
    t.same(c.redis, want.redis, `${op}: Redis ${want.redis.join(", ") || "none"}`);
  }
  t.same(Object.keys(costs).sort(), Object.keys(BUDGET).sort(), "every operation of the budget counted");

  t.test("on a send's path: its statement and its append; the rate limit's take goes behind", async (t) => {
    await sendTo(b); // the bucket's figure known
    px.redis.hold();
    const p0 = px.postgres.calls.length;
    const r0 = px.redis.calls.length;
    let answered = false;
    const sent = sendTo(b).then((r) => ((answered = true), r));
    await until(() => px.redis.since(r0).some((x) => command(x) === "streamAppend"), {
      what: "the append sent while Redis answers nothing",
    });
    t.equal(
      px.postgres.since(p0).filter((x) => !background(x, false)).length,
      1,
      "the statement ran without the take's answer",
    );
    t.notOk(answered, "the 201 waits for the append");
    px.redis.release();
    t.equal((await sent).status, 201);
  });

  t.test("a principal's first long poll on a node writes its presence entry, behind; the next ones none", async (t) => {
    // runtime/messaging/poll-presence.ts: one entry per polling principal on each node, renewed by the node's one timer
    const d = await registerAgent(base, "d");
    const presence = (c: Cost) => c.redis.filter((x) => /^presence|^PUBLISH/.test(x));
    t.same(presence(await cost(() => pending(d))), ["presenceConnect", "PUBLISH"], "the entry, and online announced");
    t.same(presence(await cost(() => pending(d))), [], "a fresh entry: no call");
    const e = await registerAgent(base, "e");
    await call(base, "GET", "/v1/agents/me", { token: e.token }); // its token known to the node
    px.redis.hold();
    try {
      // pending checks the 200
      t.ok(
        Array.isArray((await pending(e)).body.messages),
        "a first poll answers while its entry's write waits on Redis",
      );
    } finally {
      px.redis.release();
    }
  });

  t.test("on an ack's path: its statement only", async (t) => {
    await sendTo(b);
    const [m] = (await pending(b)).body.messages;
    px.redis.hold();
    try {
      const r = await call(base, "POST", `/v1/messages/${m!.id}/ack`, { token: b.token });
      t.equal(r.status, 204, "answered while Redis answers nothing");
    } finally {
      px.redis.release();
    }
  });
});
