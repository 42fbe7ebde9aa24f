// The feed and its fan-out cache over HTTP on both engines and real Postgres: a pagination walk over
// hundreds of moments with concurrent posting, a cache flush mid-walk, reads beyond the cached depth,
// friendship changes taking effect on the very next read, exact counts under 50 concurrent writers,
// and comment paging.
import { Redis } from "ioredis";
import t, { type Test } from "tap";
import { MemoryFeed } from "../runtime/engines/memory/feed.ts";
import { MemoryMoments } from "../runtime/engines/memory/moments.ts";
import { RedisFeed } from "../runtime/engines/redis/feed.ts";
import { redisKeys } from "../runtime/engines/redis/keys.ts";
import { defineScripts } from "../runtime/engines/redis/scripts.ts";
import type { FeedCache } from "../runtime/engines/feed.ts";
import { feedStats } from "../runtime/social/feed.ts";
import { Likes } from "../runtime/social/likes.ts";
import { TEST_REDIS_URL } from "./helpers/env.ts";
import { call, type Registered, registerAgent } from "./helpers/http.ts";
import { deletePrefix, type EngineKind, startTestNode, type TestNode } from "./helpers/node.ts";
import { befriend, feedPage, num, post, unfriend, type Visibility, walkFeed } from "./helpers/social.ts";
import { until } from "./helpers/wait.ts";

const VIS: Visibility[] = ["public", "friends", "private"];

/** Swap the node's feed cache for the rest of test `t` (a smaller depth to exercise the Postgres fallback). */
function swapFeed(t: Test, node: TestNode, engine: EngineKind, depth: number): void {
  const original = node.svc.engines.feed;
  let feed: FeedCache;
  if (engine === "redis") {
    const redis = defineScripts(new Redis(TEST_REDIS_URL));
    t.teardown(() => redis.disconnect());
    feed = new RedisFeed(redis, redisKeys(node.prefix), { depth });
  } else {
    feed = new MemoryFeed({ depth, moments: node.svc.engines.moments });
  }
  (node.svc.engines as any).feed = feed;
  t.teardown(() => {
    // A memory cache missed the pushes made meanwhile: start over with an empty one.
    (node.svc.engines as any).feed =
      engine === "redis" ? original : new MemoryFeed({ depth: original.depth, moments: node.svc.engines.moments });
  });
}

/** Forget everything cached: the Redis keys of the test prefix, or a fresh in-process cache. */
async function flush(node: TestNode, engine: EngineKind): Promise<void> {
  if (engine === "redis") await deletePrefix(node.prefix);
  else {
    const moments = new MemoryMoments();
    Object.assign(node.svc.engines, { moments, feed: new MemoryFeed({ depth: node.svc.engines.feed.depth, moments }) });
  }
}

for (const engine of ["redis", "memory"] as EngineKind[]) {
  t.test(`feed (${engine} engines)`, async (t) => {
    const node = await startTestNode(t, { engine, env: { FLOCK_LIMITS_SCALE: "1000" } });
    const base = node.url;

    t.test(
      "pagination walk over 300 moments with concurrent posting, a flush mid-walk, and beyond depth",
      async (t) => {
        const me = await registerAgent(base, "me");
        const friend = await registerAgent(base, "friend");
        const stranger = await registerAgent(base, "stranger");
        await befriend(base, me, friend);
        await feedPage(base, me); // warm: most moments arrive by fan-out
        const posted = new Map<string, { who: Registered; vis: Visibility }>();
        const sees = (viewer: Registered, who: Registered, vis: Visibility) =>
          viewer === who ||
          vis === "public" ||
          (vis === "friends" && [viewer, who].every((x) => x === me || x === friend));
        const visibleTo = (viewer: Registered) =>
          new Set([...posted].filter(([, p]) => sees(viewer, p.who, p.vis)).map(([id]) => id));
        const authors = [me, friend, stranger];
        const jobs: Promise<void>[] = [];
        for (let i = 0; i < 300; i++) {
          const who = authors[i % 3]!;
          const vis = VIS[Math.floor(i / 3) % 3]!;
          jobs.push(
            post(base, who, vis, `m${i}`).then((m) => {
              posted.set(m.id, { who, vis });
            }),
          );
          if (jobs.length >= 8) await Promise.all(jobs.splice(0));
        }
        await Promise.all(jobs);
        const visible = visibleTo(me);
        t.equal(visible.size, 100 + 67 + 34, "mine, the friend's public and friends, the stranger's public");

        const check = (label: string, ids: string[], extra: Set<string>) => {
          t.equal(new Set(ids).size, ids.length, `${label}: no moment twice`);
          for (let i = 1; i < ids.length; i++)
            if (num(ids[i]!) >= num(ids[i - 1]!)) t.fail(`${label}: not newest first at ${i}`);
          const seen = new Set(ids);
          const missing = [...visible].filter((id) => !seen.has(id));
          t.same(missing, [], `${label}: every visible moment once`);
          const unexpected = ids.filter((id) => !visible.has(id) && !extra.has(id));
          t.same(unexpected, [], `${label}: nothing invisible or unknown`);
        };

        // Walk 1: warm cache, others posting between pages.
        const during = new Set<string>();
        const poster = async () => {
          for (const who of authors) {
            const vis = VIS[(posted.size + during.size) % 3]!;
            const m = await post(base, who, vis, "during");
            posted.set(m.id, { who, vis });
            if (sees(me, who, vis)) during.add(m.id);
          }
        };
        const stats = () => ({ ...feedStats });
        const delta = (from: typeof feedStats) =>
          Object.fromEntries(Object.entries(feedStats).map(([k, v]) => [k, v - from[k as keyof typeof feedStats]]));
        let s0 = stats();
        const w1 = await walkFeed(base, me, 7, async (page) => {
          if (page % 3 === 0) await poster();
        });
        check("warm walk", w1.ids, during);
        t.ok(w1.pages > 28);
        t.same(delta(s0), { cached: w1.pages, miss: 0, deep: 0, stale: 0 }, "a warm walk is served from the cache");
        for (const id of during) visible.add(id);

        // Walk 2: the cache is flushed mid-walk; nothing is lost.
        s0 = stats();
        const w2 = await walkFeed(base, me, 20, async (page) => {
          if (page === 4) await flush(node, engine);
        });
        check("flush mid-walk", w2.ids, new Set());
        t.same(delta(s0), { cached: w2.pages - 1, miss: 1, deep: 0, stale: 0 }, "one miss rebuilds, then cached again");

        // Walk 3: a cache of depth 50 answers the head; Postgres answers beyond it.
        swapFeed(t, node, engine, 50);
        const head = await feedPage(base, me, "?limit=10");
        t.equal(head.moments.length, 10);
        s0 = stats();
        const w3 = await walkFeed(base, me, 9, async (page) => {
          if (page === 2) await poster();
        });
        check("beyond depth", w3.ids, during);
        const d3 = delta(s0);
        t.ok(
          d3.cached! >= 4 && d3.deep! > 10 && d3.stale === 0,
          `head cached, the rest from Postgres: ${JSON.stringify(d3)}`,
        );

        // A stranger sees only public moments (and their own).
        const ws = await walkFeed(base, stranger, 100);
        t.same(new Set(ws.ids), visibleTo(stranger), "the stranger's walk");
        t.equal(ws.ids.length, visibleTo(stranger).size);
      },
    );

    t.test("a new moment is in the next read of every feed it belongs to", async (t) => {
      const a = await registerAgent(base, "a");
      const f = await registerAgent(base, "f");
      const s = await registerAgent(base, "s");
      await befriend(base, a, f);
      for (const v of [a, f, s]) await feedPage(base, v);
      for (const vis of VIS) {
        const m = await post(base, a, vis);
        const tops = await Promise.all(
          [a, f, s].map(async (v) => (await feedPage(base, v, "?limit=1")).moments[0]?.id),
        );
        t.same(
          tops.map((id) => id === m.id),
          [true, vis !== "private", vis === "public"],
          vis,
        );
      }
    });

    t.test("unfriending hides friends-only moments at once; befriending shows them at once", async (t) => {
      const a = await registerAgent(base, "a2");
      const b = await registerAgent(base, "b2");
      await befriend(base, a, b);
      await feedPage(base, a);
      const m = await post(base, b, "friends");
      const pub = await post(base, b, "public");
      const ids = async () => (await feedPage(base, a, "?limit=100")).moments.map((x) => x.id);
      t.ok((await ids()).includes(m.id));
      await unfriend(base, b, a);
      const after = await ids();
      t.notOk(after.includes(m.id), "friends moment gone on the very next read");
      t.ok(after.includes(pub.id), "public one stays");
      t.equal((await call(base, "GET", `/v1/moments/${m.id}`, { token: a.token })).status, 404);
      t.equal((await call(base, "POST", `/v1/moments/${m.id}/like`, { token: a.token })).status, 404);
      t.equal((await call(base, "GET", `/v1/moments/${m.id}/comments`, { token: a.token })).status, 404);
      await befriend(base, a, b);
      t.ok((await ids()).includes(m.id), "back on the very next read after befriending again");
      const c = await registerAgent(base, "c2");
      const old = await post(base, c, "friends");
      t.notOk((await ids()).includes(old.id));
      await befriend(base, c, a);
      t.ok((await ids()).includes(old.id), "a new friend's older friends-only moment appears at once");
    });

    t.test("ids the cache still holds but Postgres lost never show, and are cleaned up", async (t) => {
      const a = await registerAgent(base, "ghost");
      const f = await registerAgent(base, "ghostfriend");
      await befriend(base, a, f);
      await feedPage(base, f);
      const pub = await post(base, a, "public");
      const fr = await post(base, a, "friends");
      const keep = await post(base, a, "public");
      // Deleted behind the cache's back (no fan-out removal).
      await node.svc.sql`delete from moments where id = any(${[pub.id.slice(7), fr.id.slice(7)]}::bigint[])`;
      const s0 = { ...feedStats };
      const ids = (await feedPage(base, f, "?limit=5")).moments.map((x) => x.id);
      t.notOk(ids.includes(pub.id) || ids.includes(fr.id), "never shown");
      t.equal(ids[0], keep.id);
      t.equal(feedStats.stale - s0.stale, 1, "noticed at hydration");
      await feedPage(base, f, "?limit=5"); // rebuilds the friend's dropped timeline
      const s1 = { ...feedStats };
      t.same(
        (await feedPage(base, f, "?limit=5")).moments.map((x) => x.id),
        ids,
      );
      t.equal(feedStats.cached - s1.cached, 1, "served from the cache again");
    });

    t.test(
      "a warm page is served from the record cache, with new counts and without deleted moments at once",
      async (t) => {
        const a = await registerAgent(base, "warmauthor");
        const f = await registerAgent(base, "warmfriend");
        await befriend(base, a, f);
        await feedPage(base, f);
        const fr = await post(base, a, "friends");
        const pub = await post(base, a, "public");
        const top2 = async () => (await feedPage(base, f, "?limit=2")).moments;
        await top2(); // caches both records
        const s0 = { ...feedStats };
        t.equal((await call(base, "POST", `/v1/moments/${fr.id}/like`, { token: f.token })).status, 204);
        t.equal(
          (await call(base, "POST", `/v1/moments/${pub.id}/comments`, { token: f.token, json: { body: "hi" } })).status,
          201,
        );
        let page = await top2();
        t.same(
          page.map((m) => [m.id, m.like_count, m.comment_count]),
          [
            [pub.id, 0, 1],
            [fr.id, 1, 0],
          ],
          "the counts just written",
        );
        t.equal((await call(base, "DELETE", `/v1/moments/${fr.id}/like`, { token: f.token })).status, 204);
        t.equal((await top2())[1]!.like_count, 0);
        t.equal((await call(base, "DELETE", `/v1/moments/${pub.id}`, { token: a.token })).status, 204);
        page = await top2();
        t.notOk(
          page.some((m) => m.id === pub.id),
          "a deleted moment is gone on the next read",
        );
        t.equal(page[0]!.id, fr.id);
        t.same(
          { cached: feedStats.cached - s0.cached, miss: feedStats.miss - s0.miss, stale: feedStats.stale - s0.stale },
          { cached: 3, miss: 0, stale: 0 },
          "every read served from the caches",
        );
        // The tombstone outlives the record: even a record filled again later does not bring it back.
        const id = BigInt(pub.id.slice(7));
        const [row] = await node.svc.sql`select 1 from moments where id = ${String(id)}`;
        t.equal(row, undefined);
        t.same(await node.svc.engines.moments.get([id]), [null], "tombstoned");
      },
    );

    t.test("likes by group commit: a failing item in a batch answers 404 alone; the others count", async (t) => {
      const author = await registerAgent(base, "batched");
      const m = await post(base, author, "public");
      const fans = await Promise.all([1, 2, 3].map((i) => registerAgent(base, `batchfan${i}`)));
      const batcher = new Likes(node.svc.sql);
      const moment = BigInt(m.id.slice(7));
      // The first like runs alone; the next three wait for it and go together, one of them by a principal
      // that does not exist (its insert breaks a foreign key, failing that statement).
      const outcomes = await Promise.allSettled([
        batcher.like({ moment, principal: fans[0]!.id }),
        batcher.like({ moment, principal: fans[1]!.id }),
        batcher.like({ moment, principal: "999999999999999999" }),
        batcher.like({ moment, principal: fans[2]!.id }),
      ]);
      t.same(
        outcomes.map((o) => o.status),
        ["fulfilled", "fulfilled", "rejected", "fulfilled"],
      );
      const rejected = outcomes[2] as PromiseRejectedResult;
      t.equal((rejected.reason as { status?: number }).status, 404);
      const counts = outcomes.flatMap((o) => (o.status === "fulfilled" ? [o.value.like_count] : []));
      t.equal(Math.max(...counts), 3, "the counts the statements returned");
      const [row] = await node.svc.sql`select like_count from moments where id = ${String(moment)}`;
      t.equal(row!.like_count, 3);
      const unliked = await Promise.all(fans.map((f) => batcher.unlike({ moment, principal: f.id })));
      t.equal(Math.min(...unliked.map((r) => r.like_count)), 0);
      const missing = await batcher
        .unlike({ moment: moment + 1n, principal: fans[0]!.id })
        .catch((e: { status?: number }) => e);
      t.equal((missing as { status?: number }).status, 404, "a missing moment");
    });

    t.test("an unlike then a like of the same moment in one batch ends liked", async (t) => {
      const author = await registerAgent(base, "toggled");
      const fan = await registerAgent(base, "double tapper");
      const other = await registerAgent(base, "first in line");
      const m = await post(base, author, "public");
      const moment = BigInt(m.id.slice(7));
      const batcher = new Likes(node.svc.sql);
      await batcher.like({ moment, principal: fan.id });
      // the first like runs alone; the unlike and like after it wait for it and go in one batch, in that order
      const outcomes = await Promise.allSettled([
        batcher.like({ moment, principal: other.id }),
        batcher.unlike({ moment, principal: fan.id }),
        batcher.like({ moment, principal: fan.id }),
      ]);
      t.same(
        outcomes.map((o) => o.status),
        ["fulfilled", "fulfilled", "fulfilled"],
        "every request answered",
      );
      const rows = await node.svc.sql`select principal from moment_likes where moment = ${String(moment)}`;
      t.same(rows.map((r) => r.principal).sort(), [fan.id, other.id].sort(), "the fan's last word was a like");
      const [count] = await node.svc.sql`select like_count from moments where id = ${String(moment)}`;
      t.equal(count!.like_count, 2, "the counter matches the rows");
    });

    t.test("a like batch chosen as a deadlock victim runs again", async (t) => {
      const author = await registerAgent(base, "locked");
      const fan = await registerAgent(base, "deadlocked fan");
      const m = await post(base, author, "public");
      const moment = String(BigInt(m.id.slice(7)));
      const batcher = new Likes(node.svc.sql);
      // Another writer holds the moment's row, the like inserts its like row and waits for the moment row; the
      // writer then inserts the same like row, waiting for the like: a cycle Postgres breaks by failing one.
      let liked: Promise<unknown> | undefined;
      const likeWaits = async () => {
        const [w] = await node.svc.sql`
          select count(*)::int as n from pg_stat_activity where wait_event_type = 'Lock' and query like '%moment_likes%'`;
        return w!.n > 0;
      };
      let lockWait: Error | undefined;
      const other = node.svc.sql
        .begin(async (tx) => {
          await tx`update moments set like_count = like_count where id = ${moment}`;
          liked = batcher.like({ moment: BigInt(moment), principal: fan.id });
          await until(likeWaits, { every: 10, what: "the like to wait for the moment's row" }).catch(
            (err: Error) => (lockWait = err),
          );
          await tx`insert into moment_likes (moment, principal) values (${moment}, ${fan.id})`;
          throw new Error("roll the other writer back");
        })
        .catch((err: Error) => err);
      await other;
      t.equal(lockWait, undefined, "the like waited for the moment's row: the cycle was made");
      const r = (await liked) as { like_count: number };
      t.equal(r.like_count, 1, "the like went through");
      const [row] = await node.svc.sql`select like_count from moments where id = ${moment}`;
      t.equal(row!.like_count, 1);
    });

    t.test("exact counts after 50 concurrent likers and commenters", async (t) => {
      const author = await registerAgent(base, "popular");
      const m = await post(base, author, "public");
      const fans = await Promise.all(Array.from({ length: 50 }, (_, i) => registerAgent(base, `fan${i}`)));
      const likes = await Promise.all(
        fans.flatMap((f) => [1, 2].map(() => call(base, "POST", `/v1/moments/${m.id}/like`, { token: f.token }))),
      );
      t.ok(likes.every((r) => r.status === 204));
      const comments = await Promise.all(
        fans.map((f, i) =>
          call(base, "POST", `/v1/moments/${m.id}/comments`, { token: f.token, json: { body: `c${i}` } }),
        ),
      );
      t.ok(comments.every((r) => r.status === 201));
      let one = (await call(base, "GET", `/v1/moments/${m.id}`, { token: author.token })).body;
      t.equal(one.like_count, 50);
      t.equal(one.comment_count, 50);
      const top = (await feedPage(base, author, "?limit=100")).moments.find((x) => x.id === m.id)!;
      t.equal(top.like_count, 50, "the feed shows the same counts");
      const unlikes = await Promise.all(
        fans
          .slice(0, 25)
          .flatMap((f) => [1, 2].map(() => call(base, "DELETE", `/v1/moments/${m.id}/like`, { token: f.token }))),
      );
      t.ok(unlikes.every((r) => r.status === 204));
      one = (await call(base, "GET", `/v1/moments/${m.id}`, { token: author.token })).body;
      t.equal(one.like_count, 25);
      const rows = await node.svc.sql`select count(*)::int as n from moment_likes where moment = ${m.id.slice(7)}`;
      t.equal(rows[0]!.n, 25, "counter matches the rows");
    });

    t.test("comments: exact shape, oldest first, paged with limit and after", async (t) => {
      const a = await registerAgent(base, "talker");
      const m = await post(base, a, "public");
      const c = await call(base, "POST", `/v1/moments/${m.id}/comments`, {
        token: a.token,
        json: { body: "  first  " },
      });
      t.equal(c.status, 201);
      t.same(Object.keys(c.body), ["id", "body", "author", "created_at"]);
      t.match(c.body.id, /^comment_[0-9]+$/);
      t.equal(c.body.body, "first");
      t.same(c.body.author, { id: a.id, display_name: "talker", avatar_url: null });
      for (const body of ["", "   ", "x".repeat(1001)]) {
        const bad = await call(base, "POST", `/v1/moments/${m.id}/comments`, { token: a.token, json: { body } });
        t.equal(bad.status, 400);
        t.equal(bad.body.field, "body");
      }
      t.equal(
        (await call(base, "POST", `/v1/moments/${m.id}/comments`, { token: a.token, json: {} })).body.field,
        "body",
      );
      const created = [c.body.id];
      for (let i = 0; i < 11; i++) {
        created.push(
          (await call(base, "POST", `/v1/moments/${m.id}/comments`, { token: a.token, json: { body: `n${i}` } })).body
            .id,
        );
      }
      const all = await call(base, "GET", `/v1/moments/${m.id}/comments`, { token: a.token });
      t.same(
        all.body.map((x: { id: string }) => x.id),
        created,
        "default page holds all 12, oldest first",
      );
      t.same(all.body[0], c.body);
      t.equal(all.headers.get("link"), null, "no next page");
      const got: string[] = [];
      let path = `/v1/moments/${m.id}/comments?limit=5`;
      for (let i = 0; i < 5 && path; i++) {
        const r = await call(base, "GET", path, { token: a.token });
        got.push(...r.body.map((x: { id: string }) => x.id));
        const link = r.headers.get("link");
        path = link ? /^<([^>]+)>; rel="next"$/.exec(link)![1]! : "";
      }
      t.same(got, created, "Link rel=next walks every comment once");
      for (const q of ["limit=0", "limit=101", "after=x", "after=moment_1"]) {
        t.equal((await call(base, "GET", `/v1/moments/${m.id}/comments?${q}`, { token: a.token })).status, 400, q);
      }
      const none = await registerAgent(base, "quiet");
      const empty = await post(base, none, "public");
      const e = await call(base, "GET", `/v1/moments/${empty.id}/comments`, { token: a.token });
      t.equal(e.status, 200);
      t.same(e.body, []);
    });
  });
}

t.test("two nodes sharing Redis and Postgres serve one feed", async (t) => {
  const n1 = await startTestNode(t, { engine: "redis" });
  const n2 = await startTestNode(t, { engine: "redis", schema: n1.schema, prefix: n1.prefix });
  const a = await registerAgent(n1.url, "a");
  const b = await registerAgent(n1.url, "b");
  await befriend(n2.url, a, b);
  await feedPage(n2.url, b); // warm on node 2
  const m = await post(n1.url, a, "friends"); // fanned out by node 1
  t.equal((await feedPage(n2.url, b, "?limit=1")).moments[0]?.id, m.id);
  await unfriend(n1.url, a, b);
  t.notOk(
    (await feedPage(n2.url, b)).moments.some((x) => x.id === m.id),
    "unfriending on node 1 shows on node 2",
  );
});
