// Idempotency-Key on every route that creates something (runtime/http/idempotency.ts): for each, a replay answers the
// first answer again and creates nothing; the same key with another body is 422; a key whose request is still
// running (held here by a lock on the table it writes) is 409, or, for a send (whose key its statement claims),
// waits for it and answers its message again; ten at once with one key create one row. Then what a
// send keeps across failures: a 503 is not kept, a message committed without its answer is found by its key, keys are
// per principal, and a bad key is a 400.
import t from "tap";
import postgres from "postgres";
import { loadConfig } from "../runtime/config.ts";
import { IdempotentRequests } from "../runtime/http/idempotency.ts";
import type { Services } from "../runtime/services.ts";
import { call, type Registered, registerAgent } from "./helpers/http.ts";
import { TEST_DATABASE_URL } from "./helpers/env.ts";
import { startTestNode, type TestNode } from "./helpers/node.ts";
import { until } from "./helpers/wait.ts";

const PNG = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 13]);

interface Case {
  name: string;
  /** The table a success writes a row to, and how to count the caller's rows there. */
  table: string;
  count: (sql: postgres.Sql, me: Registered) => Promise<number>;
  /** The request, with a body that differs by `variant`. */
  request: (variant: number) => { path: string; json?: unknown; body?: string; contentType?: string };
  created: number;
  /** A send: its key is claimed by the statement that stores it (runtime/messaging/send-message.ts). */
  folded?: boolean;
}

let n = 0;
const key = () => `key-${process.pid}-${Date.now()}-${n++}`;

async function post(node: TestNode, who: Registered, req: ReturnType<Case["request"]>, k: string | undefined) {
  const headers: Record<string, string> = {};
  if (k !== undefined) headers["idempotency-key"] = k;
  if (req.contentType) headers["content-type"] = req.contentType;
  return call(node.url, "POST", req.path, {
    token: who.token,
    headers,
    ...(req.json !== undefined ? { json: req.json } : { body: req.body }),
  });
}

t.test("Idempotency-Key on every creating route", async (t) => {
  // limits scaled up: one principal sends many requests here, and refused ones would ban the test's address
  const node = await startTestNode(t, { env: { FLOCK_LIMITS_SCALE: "1000" } });
  const sql = postgres(TEST_DATABASE_URL, { max: 3, onnotice: () => {}, connection: { search_path: node.schema } });
  t.teardown(() => sql.end());
  const me = await registerAgent(node.url, "me");
  const peer = await registerAgent(node.url, "peer");
  const group = await call(node.url, "POST", "/v1/groups", {
    token: me.token,
    json: { name: "g", members: [peer.id] },
  });
  const groupId = group.body.group.id as string;
  const moment = await call(node.url, "POST", "/v1/moments", {
    token: me.token,
    json: { content: "m", visibility: "public" },
  });
  const momentId = moment.body.id as string;
  /** Whether a statement waits for a lock on `table` (in this node's schema). */
  const waitingOn = async (table: string) =>
    Number(
      (
        await sql`select count(*) from pg_locks l join pg_class c on c.oid = l.relation
          join pg_namespace s on s.oid = c.relnamespace
          where not l.granted and s.nspname = ${node.schema} and c.relname = ${table}`
      )[0]!["count"],
    ) > 0;
  const friendTargets: Registered[] = [];
  for (let i = 0; i < 5; i++) friendTargets.push(await registerAgent(node.url, `f${i}`));

  const cases: Case[] = [
    {
      name: "direct message",
      table: "messages",
      created: 201,
      folded: true,
      count: async (s, w) =>
        Number((await s`select count(*) from messages where sender = ${w.id} and recipient is not null`)[0]!["count"]),
      request: (v) => ({ path: "/v1/messages", json: { to: peer.id, body: `hello ${v}` } }),
    },
    {
      name: "group message",
      table: "messages",
      created: 201,
      folded: true,
      count: async (s, w) =>
        Number((await s`select count(*) from messages where sender = ${w.id} and recipient is null`)[0]!["count"]),
      request: (v) => ({ path: `/v1/groups/${groupId}/messages`, json: { body: `to all ${v}` } }),
    },
    {
      name: "moment",
      table: "moments",
      created: 201,
      count: async (s, w) => Number((await s`select count(*) from moments where author = ${w.id}`)[0]!["count"]),
      request: (v) => ({ path: "/v1/moments", json: { content: `post ${v}`, visibility: "public" } }),
    },
    {
      name: "comment",
      table: "moment_comments",
      created: 201,
      count: async (s, w) =>
        Number((await s`select count(*) from moment_comments where author = ${w.id}`)[0]!["count"]),
      request: (v) => ({ path: `/v1/moments/${momentId}/comments`, json: { body: `nice ${v}` } }),
    },
    {
      name: "friend request",
      table: "friend_requests",
      created: 201,
      count: async (s, w) =>
        Number((await s`select count(*) from friend_requests where from_id = ${w.id}`)[0]!["count"]),
      request: (v) => ({ path: "/v1/friends/request", json: { to: friendTargets[v]!.id } }),
    },
    {
      name: "group",
      table: "groups",
      created: 201,
      count: async (s, w) => Number((await s`select count(*) from groups where owner = ${w.id}`)[0]!["count"]),
      request: (v) => ({ path: "/v1/groups", json: { name: `group ${v}` } }),
    },
    {
      name: "upload",
      table: "files",
      created: 201,
      count: async (s, w) => Number((await s`select count(*) from files where owner = ${w.id}`)[0]!["count"]),
      request: (v) => ({
        path: `/v1/files/upload?name=f${v}.png`,
        body: Buffer.concat([PNG, Buffer.alloc(10 + v, v)]).toString("latin1"),
        contentType: "image/png",
      }),
    },
  ];

  for (const c of cases) {
    t.test(c.name, async (t) => {
      const who = await registerAgent(node.url, `w-${c.name}`);
      if (c.name === "comment" || c.name === "group message") {
        // a member of the group / a reader of the public moment
        if (c.name === "group message")
          await call(node.url, "POST", `/v1/groups/${groupId}/members`, { token: me.token, json: { member: who.id } });
      }
      // replay: the same answer, marked, and one row
      const k = key();
      const first = await post(node, who, c.request(0), k);
      t.equal(first.status, c.created, `first: ${first.text}`);
      t.equal(first.headers.get("idempotency-replayed"), null);
      const again = await post(node, who, c.request(0), k);
      t.equal(again.status, first.status);
      t.equal(again.text, first.text, "the first answer's body, byte for byte");
      t.equal(again.headers.get("idempotency-replayed"), "true");
      t.equal(await c.count(sql, who), 1, "one row");
      // another request with the same key: 422, nothing made
      const other = await post(node, who, c.request(1), k);
      t.equal(other.status, 422, other.text);
      t.equal(other.body.error, "idempotency_key_reused");
      t.equal(await c.count(sql, who), 1);
      // still running: its table is locked, so the first waits; the second with its key is 409
      const held = key();
      const release = deferred();
      const locked = deferred();
      const lock = sql.begin(async (tx) => {
        await tx.unsafe(`lock table "${c.table}" in exclusive mode`);
        locked.resolve();
        await release.promise;
      });
      await locked.promise;
      const running = post(node, who, c.request(2), held);
      if (c.folded) {
        // the send's key is claimed by the statement that stores it, which waits for the table: a second send with
        // the key waits too, for the next batch, and answers the first's message again once it has committed
        await until(() => waitingOn(c.table), { what: "the send waiting for its table", every: 10 });
        const second = post(node, who, c.request(2), held);
        const queued = () => node.svc.hub.queued();
        await until(() => queued().direct + queued().group === 1, { what: "the second queued", every: 5 });
        release.resolve();
        await lock;
        const [a, b] = [await running, await second];
        t.equal(a.status, c.created, a.text);
        t.equal(b.status, c.created, b.text);
        // group sends run two batches at once: either may take the table first, the other answers its message
        const replays = [a, b].filter((x) => x.headers.get("idempotency-replayed") === "true");
        t.equal(replays.length, 1, "one of the two is the other's answer");
        t.equal(b.text, a.text);
      } else {
        await until(
          async () => Number((await sql`select count(*) from idempotency_keys where key = ${held}`)[0]!["count"]) === 1,
          { what: "the claim", every: 10 },
        );
        const busy = await post(node, who, c.request(2), held);
        t.equal(busy.status, 409, busy.text);
        t.equal(busy.headers.get("retry-after"), "1");
        release.resolve();
        await lock;
        t.equal((await running).status, c.created);
      }
      t.equal((await post(node, who, c.request(2), held)).headers.get("idempotency-replayed"), "true");
      t.equal(await c.count(sql, who), 2);
      // ten at once with one key: one row; each answer is the creation, its replay, or 409 while it ran
      const together = key();
      const answers = await Promise.all(Array.from({ length: 10 }, () => post(node, who, c.request(3), together)));
      const statuses = answers.map((a) => a.status);
      t.ok(
        statuses.every((s) => s === c.created || s === 409),
        `statuses ${statuses.join(",")}`,
      );
      t.equal(
        answers.filter((a) => a.status === c.created && a.headers.get("idempotency-replayed") === null).length,
        1,
        "one made it",
      );
      t.equal(await c.count(sql, who), 3, "one row more");
    });
  }

  t.test("keys are per principal; a bad key is a 400; no key: no idempotency", async (t) => {
    const k = key();
    const a = await post(node, me, { path: "/v1/moments", json: { content: "same", visibility: "public" } }, k);
    const b = await post(node, peer, { path: "/v1/moments", json: { content: "same", visibility: "public" } }, k);
    t.equal(a.status, 201);
    t.equal(b.status, 201);
    t.not(a.body.id, b.body.id, "two principals, one key: two moments");
    const bad = await post(
      node,
      me,
      { path: "/v1/moments", json: { content: "x", visibility: "public" } },
      "with space",
    );
    t.equal(bad.status, 400);
    t.equal(bad.body.field, "Idempotency-Key");
    const long = await post(
      node,
      me,
      { path: "/v1/moments", json: { content: "x", visibility: "public" } },
      "k".repeat(256),
    );
    t.equal(long.status, 400);
    const x = await post(
      node,
      me,
      { path: "/v1/moments", json: { content: "twice", visibility: "public" } },
      undefined,
    );
    const y = await post(
      node,
      me,
      { path: "/v1/moments", json: { content: "twice", visibility: "public" } },
      undefined,
    );
    t.not(x.body.id, y.body.id);
  });

  t.test("a 4xx answer is kept; a retry after the cause is gone still gets it", async (t) => {
    const k = key();
    const gone = await post(node, me, { path: "/v1/messages", json: { to: "99999999999999999", body: "x" } }, k);
    t.equal(gone.status, 404);
    const again = await post(node, me, { path: "/v1/messages", json: { to: "99999999999999999", body: "x" } }, k);
    t.equal(again.status, 404);
    t.equal(again.headers.get("idempotency-replayed"), "true");
  });

  t.test(
    "a message committed but never answered is found by its key: the retry gets it, nothing is stored twice",
    async (t) => {
      const k = key();
      const first = await post(node, me, { path: "/v1/messages", json: { to: peer.id, body: "once" } }, k);
      t.equal(first.status, 201);
      // what a node that died between the commit and the answer leaves: the message, and no kept answer
      await sql`delete from idempotency_keys where key = ${k}`;
      const retry = await post(node, me, { path: "/v1/messages", json: { to: peer.id, body: "once" } }, k);
      t.equal(retry.status, 201);
      t.same(retry.body, first.body, "the message it made");
      t.equal(retry.headers.get("idempotency-replayed"), "true", "marked as a replay");
      t.equal(Number((await sql`select count(*) from messages where idempotency_key = ${k}`)[0]!["count"]), 1);
      const g = key();
      const gFirst = await post(node, me, { path: `/v1/groups/${groupId}/messages`, json: { body: "once" } }, g);
      await sql`delete from idempotency_keys where key = ${g}`;
      const gRetry = await post(node, me, { path: `/v1/groups/${groupId}/messages`, json: { body: "once" } }, g);
      t.same(gRetry.body, gFirst.body);
      t.equal(Number((await sql`select count(*) from messages where idempotency_key = ${g}`)[0]!["count"]), 1);
    },
  );

  t.test("a claim left by a request that is not running here any more is taken over at once", async (t) => {
    const k = key();
    // a row claimed by this node's token but not running: what a release that failed (Postgres away) leaves
    const first = await post(node, me, { path: "/v1/moments", json: { content: "lost", visibility: "public" } }, k);
    t.equal(first.status, 201);
    await sql`update idempotency_keys set status = null, body = null where key = ${k}`;
    await sql`delete from moments where id = ${String(first.body.id).replace(/^moment_/, "")}`;
    const retry = await post(node, me, { path: "/v1/moments", json: { content: "lost", visibility: "public" } }, k);
    t.equal(retry.status, 201, retry.text);
    t.equal(retry.headers.get("idempotency-replayed"), null, "run again, not replayed");
  });
});

function deferred() {
  let resolve!: () => void;
  const promise = new Promise<void>((r) => (resolve = r));
  return { promise, resolve };
}

t.test(
  "keys older than 24 hours are swept, all of them (by a node's first keyed request, then each minute)",
  async (t) => {
    const node = await startTestNode(t);
    const sql = postgres(TEST_DATABASE_URL, { max: 1, onnotice: () => {}, connection: { search_path: node.schema } });
    t.teardown(() => sql.end());
    const me = await registerAgent(node.url, "me");
    // more than two of a sweep's statements: one sweep goes on until it has dropped them all
    const OLD = 25_000;
    await sql`insert into idempotency_keys (principal, key, fingerprint, owner, status, body, created_at)
    select ${me.id}, 'old-' || i, '\\x00', 'gone', 201, '{}', now() - interval '25 hours'
    from generate_series(1, ${OLD}) as i`;
    await sql`insert into idempotency_keys (principal, key, fingerprint, owner, status, body, created_at)
    values (${me.id}, 'recent', '\\x00', 'gone', 201, '{}', now() - interval '23 hours')`;
    t.equal(
      (await post(node, me, { path: "/v1/moments", json: { content: "k", visibility: "public" } }, key())).status,
      201,
    );
    await until(
      async () => Number((await sql`select count(*) from idempotency_keys where key like 'old-%'`)[0]!["count"]) === 0,
      { what: "every old key swept", every: 50 },
    );
    t.same(
      (await sql`select key from idempotency_keys where key = 'recent'`).map((r) => r["key"]),
      ["recent"],
      "a key of 23 hours stays",
    );
  },
);

t.test("a window shorter than six minutes is swept each sixth of it, so no key outlives it by more", async (t) => {
  // the sweeper alone, on a migrated schema, with its clock in the test's hand: with a 2-minute window a sweep is due
  // 20 s after the last (each minute otherwise); sweep() answers null when none is due
  const node = await startTestNode(t);
  const sql = postgres(TEST_DATABASE_URL, { max: 1, onnotice: () => {}, connection: { search_path: node.schema } });
  t.teardown(() => sql.end());
  let now = Date.now();
  const svc = { config: loadConfig({ FLOCK_IDEMPOTENCY_WINDOW: "2m" }), now: () => now, sql, log: { warn() {} } };
  const keys = new IdempotentRequests(svc as unknown as Services);
  t.equal(await keys.sweep(), 0, "the first sweep is due at once (nothing to drop)");
  const me = await registerAgent(node.url, "me");
  await sql`insert into idempotency_keys (principal, key, fingerprint, owner, status, body, created_at)
    values (${me.id}, 'past', '\\x00', 'gone', 201, '{}', now() - interval '3 minutes')`;
  now += 10_000;
  t.equal(keys.sweep(), null, "10 s after a sweep: none due");
  now += 11_000;
  t.equal(await keys.sweep(), 1, "21 s after it: due, and the key past the window goes");
  t.same(await sql`select key from idempotency_keys where key = 'past'`, [], "gone from the table");
});

t.test("FLOCK_IDEMPOTENCY_WINDOW: a key past it is run again", async (t) => {
  // the first send happens three minutes ago by the node's clock (its message's id says so), then time comes back
  let shift = -3 * 60_000;
  const node = await startTestNode(t, { env: { FLOCK_IDEMPOTENCY_WINDOW: "2m" }, now: () => Date.now() + shift });
  const sql = postgres(TEST_DATABASE_URL, { max: 1, onnotice: () => {}, connection: { search_path: node.schema } });
  t.teardown(() => sql.end());
  const me = await registerAgent(node.url, "me");
  const to = await registerAgent(node.url, "to");
  const k = key();
  const send = () => post(node, me, { path: "/v1/messages", json: { to: to.id, body: "twice, a window apart" } }, k);
  const first = await send();
  t.equal(first.status, 201);
  t.equal((await send()).headers.get("idempotency-replayed"), "true", "within the window: replayed");
  await sql`update idempotency_keys set created_at = now() - interval '3 minutes' where key = ${k}`;
  shift = 0;
  const later = await send();
  t.equal(later.status, 201);
  t.equal(later.headers.get("idempotency-replayed"), null, "past the window: run again");
  t.not(later.body.id, first.body.id, "a new message");
  for (const bad of ["unlimited", "30s", "soon"])
    t.throws(() => loadConfig({ FLOCK_IDEMPOTENCY_WINDOW: bad }), `FLOCK_IDEMPOTENCY_WINDOW=${bad} is refused`);
});
