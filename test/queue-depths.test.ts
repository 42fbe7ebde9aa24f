// The queue gauges move with the queues (runtime/metrics.ts, runtime/queue-depths.ts). A real psql process holds the
// row lock a statement needs (a recipient's inbox row for sends, a member's cursor row for acks), so the node's real
// statements wait on real Postgres: the sends (or acks) queue behind the one running, and /metrics, scraped over HTTP
// meanwhile, shows them waiting; once psql commits, everything is answered and the gauges read 0 again.
// The hold is kept short: a statement still waiting after 2.5 s is cancelled (statement_timeout, runtime/node.ts), and
// a send that waited 1 s for its batch is refused (runtime/messaging/hub.ts); the gauges show at once.
import { spawn } from "node:child_process";
import t from "tap";
import { call, type Registered, registerAgent } from "./helpers/http.ts";
import { TEST_DATABASE_URL } from "./helpers/env.ts";
import { startTestNode, type TestNode } from "./helpers/node.ts";
import { parseScrape, type Scrape, scrapeNode, total } from "./helpers/scrape.ts";
import { until } from "./helpers/wait.ts";

interface Tap {
  teardown(fn: () => void): void;
}

/** How many of `ps` have settled so far. */
function settledCount(ps: Promise<unknown>[]): () => number {
  let n = 0;
  for (const p of ps)
    void p.then(
      () => n++,
      () => n++,
    );
  return () => n;
}

/** A psql process that, in one transaction, locks what `lockSql` selects FOR UPDATE, until `release` commits. */
async function holdRows(t: Tap, node: TestNode, lockSql: string) {
  const psql = spawn("psql", [TEST_DATABASE_URL, "-X", "-q", "-A", "-t", "-v", "ON_ERROR_STOP=1"], {
    stdio: ["pipe", "pipe", "pipe"],
  });
  t.teardown(() => psql.kill("SIGKILL"));
  let out = "";
  psql.stdout.on("data", (d) => (out += String(d)));
  psql.stderr.on("data", (d) => (out += String(d)));
  psql.stdin.write(`set search_path to "${node.schema}";\nbegin;\n${lockSql} for update;\n\\echo held\n`);
  await until(() => /^held$/m.test(out), { ms: 10_000, every: 10, what: () => `psql to take the lock (${out})` });
  const ended = new Promise<number | null>((resolve) => psql.once("exit", resolve));
  return {
    async release(): Promise<void> {
      psql.stdin.end("commit;\n");
      const code = await ended;
      if (code !== 0) throw new Error(`psql ended with ${code}: ${out}`);
    },
  };
}

/** Scrape until `cond` holds (every 10 ms; `ms` at most), answering that scrape. */
async function scrapeUntil(
  node: TestNode,
  cond: (s: Scrape) => boolean,
  ms: number,
  what: () => string,
): Promise<Scrape> {
  let last: Scrape = new Map();
  await until(
    async () => {
      last = await scrapeNode(node.metricsPort);
      return cond(last);
    },
    { ms, every: 10, what },
  );
  return last;
}

const describe = (s: Scrape, names: string[]) => names.map((n) => `${n}=${total(s, n)}`).join(", ");

t.test("sends held by a locked inbox: the send queue and the pool's busy connection show, then empty", async (t) => {
  // one connection, so a query behind the held statement is seen waiting in the pool too; the held statement may wait
  // 30 s, not the node's 2.5 s (a loaded CI machine once took over 2 s to get the six sends in)
  const node = await startTestNode(t, {
    engine: "redis",
    statementTimeoutMs: 30_000,
    env: { FLOCK_METRICS_PORT: "0", FLOCK_LIMITS_SCALE: "100", PG_POOL: "1" },
  });
  const base = node.url;
  const [alice, carol, bob, dave] = await Promise.all(
    ["alice", "carol", "bob", "dave"].map((n) => registerAgent(base, n)),
  );
  const send = (from: Registered, body: string) =>
    call(base, "POST", "/v1/messages", { token: from.token, json: { to: bob!.id, body } });
  // bob's inbox row exists once he has a message, and each sender's thread with him is known (no statement to make it)
  t.equal((await send(alice!, "first")).status, 201);
  t.equal((await send(carol!, "first")).status, 201);

  const idle = await scrapeNode(node.metricsPort);
  t.equal(total(idle, "flock_send_queue_depth", { kind: "direct" }), 0, "no send waiting");
  t.equal(total(idle, "flock_postgres_pool_connections"), 1, "the pool's one connection is counted");

  const lock = await holdRows(t, node, `select last_seq from inboxes where principal = '${bob!.id}'`);
  const started = performance.now();
  const sends = [alice!, carol!, alice!, carol!, alice!, carol!].map((from, i) => send(from, `held ${i}`));
  // dave's long poll reads Postgres: its query waits behind the held statement on the pool's one connection
  const daves = call(base, "GET", "/v1/messages/pending?timeout=0", { token: dave!.token });
  const answeredSoFar = settledCount([...sends, daves]);
  const WAITING = ["flock_send_queue_depth", "flock_postgres_pool_waiting", "flock_postgres_pipelined_queries"];
  let held: Scrape;
  try {
    held = await scrapeUntil(
      node,
      (s) =>
        total(s, "flock_send_queue_depth", { kind: "direct" }) === 6 &&
        total(s, "flock_postgres_pool_waiting") + total(s, "flock_postgres_pipelined_queries") >= 1,
      15_000,
      () => "the six sends queued, dave's query behind the running batch",
    );
    t.equal(answeredSoFar(), 0, "nothing is answered while the lock is held");
  } finally {
    await lock.release();
  }
  const heldMs = Math.round(performance.now() - started);
  t.equal(
    total(held, "flock_send_queue_depth", { kind: "direct" }),
    6,
    "the six sends wait for their commit (one batch committing, the rest queued)",
  );
  t.equal(total(held, "flock_send_queue_depth", { kind: "group" }), 0, "no group send");
  t.equal(
    total(held, "flock_postgres_pool_connections", { state: "busy" }),
    1,
    "the pool's connection is busy with the held statement",
  );
  t.ok(
    total(held, "flock_postgres_pool_waiting") + total(held, "flock_postgres_pipelined_queries") >= 1,
    `a query waits behind it (${describe(held, WAITING)})`,
  );

  const answered = await Promise.all(sends);
  t.same(
    answered.map((r) => r.status),
    [201, 201, 201, 201, 201, 201],
    `every held send is stored once the lock goes (held ${heldMs} ms)`,
  );
  t.equal((await daves).status, 200, "dave's poll is answered");
  const after = await scrapeUntil(
    node,
    (s) => WAITING.every((n) => total(s, n) === 0),
    10_000,
    () => "the queues empty again",
  );
  t.equal(total(after, "flock_send_queue_depth"), 0, "no send waits");
  t.equal(total(after, "flock_cursor_copies_held"), 0, "no ack's cursor copy held");
  t.equal(total(after, "flock_postgres_pool_connections", { state: "busy" }), 0, "the connection is idle again");
  t.equal(total(after, "flock_postgres_pool_connections", { state: "idle" }), 1);

  // the Redis gauge reads the command connection's commands awaiting replies: with none, 0 ...
  const PENDING = "flock_redis_pending_commands";
  await scrapeUntil(
    node,
    (s) => total(s, PENDING) === 0,
    5000,
    () => "a scrape with no Redis command awaited",
  );
  // ... and while the connection has one awaited, that one: a PING sent and not answered yet when the scrape reads
  const registry = node.svc.metrics.registry;
  const quiet = parseScrape(await registry.metrics());
  const ping = node.svc.engines.ping();
  const busy = parseScrape(await registry.metrics());
  await ping;
  t.equal(
    total(busy, PENDING),
    total(quiet, PENDING) + 1,
    `the scrape counts the PING awaited (${total(quiet, PENDING)}, then ${total(busy, PENDING)})`,
  );
});

t.test("acks held by a locked cursor: the ack queue shows them, then empties", async (t) => {
  const node = await startTestNode(t, {
    engine: "redis",
    statementTimeoutMs: 30_000,
    env: { FLOCK_METRICS_PORT: "0", FLOCK_LIMITS_SCALE: "100" },
  });
  const base = node.url;
  const [alice, bob] = await Promise.all(["alice", "bob"].map((n) => registerAgent(base, n)));
  const ids: string[] = [];
  for (let i = 0; i < 4; i++) {
    const r = await call(base, "POST", "/v1/messages", { token: alice!.token, json: { to: bob!.id, body: `m${i}` } });
    t.equal(r.status, 201);
    ids.push(r.body.id);
  }
  const ack = (id: string) => call(base, "POST", `/v1/messages/${id}/ack`, { token: bob!.token });
  // the first ack makes sure bob's cursor in his inbox is a row (the one an ack updates)
  t.equal((await ack(ids[0]!)).status, 204);

  const lock = await holdRows(
    t,
    node,
    `select acked_seq from stream_cursors where member = '${bob!.id}' and thread_id = 0`,
  );
  const acks = ids.slice(1).map(ack);
  const answeredSoFar = settledCount(acks);
  let held: Scrape;
  try {
    held = await scrapeUntil(
      node,
      (s) => total(s, "flock_ack_queue_depth") === 3,
      15_000,
      () => "bob's three acks waiting",
    );
    t.equal(answeredSoFar(), 0, "no ack is answered while the lock is held");
  } finally {
    await lock.release();
  }
  t.equal(total(held, "flock_ack_queue_depth"), 3, "the three acks wait for their commit");
  t.same(
    (await Promise.all(acks)).map((r) => r.status),
    [204, 204, 204],
    "each is answered once the lock goes",
  );
  const after = await scrapeUntil(
    node,
    (s) => total(s, "flock_ack_queue_depth") === 0,
    10_000,
    () => "the ack queue empty again",
  );
  t.equal(total(after, "flock_ack_queue_depth"), 0);
});
