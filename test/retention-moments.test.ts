// Moments retention (FLOCK_RETENTION_MOMENTS) over HTTP on both engines and real Postgres, with the node's clock
// moved by hand: past the horizon a moment is gone for everyone at once (the feed from its caches and from Postgres,
// a cursor from before it, the moment, its comments and likes), a moment posted after it is not; then
// expireMoments takes the rows away in bounded batches with their likes and comments.
import t from "tap";
import { IdGenerator } from "../runtime/ids.ts";
import { expireMoments } from "../runtime/retention/moments-store.ts";
import { feedStats } from "../runtime/social/feed.ts";
import { call, type Registered, registerAgent } from "./helpers/http.ts";
import { type EngineKind, startTestNode } from "./helpers/node.ts";
import { befriend, feedPage, post, walkFeed } from "./helpers/social.ts";

const MINUTE = 60_000;

for (const engine of ["redis", "memory"] as EngineKind[]) {
  t.test(`moments retention (${engine} engines)`, async (t) => {
    let skew = 0;
    const now = () => Date.now() + skew;
    const node = await startTestNode(t, {
      engine,
      now,
      env: { FLOCK_RETENTION_MOMENTS: "10m", FLOCK_LIMITS_SCALE: "1000" },
    });
    // Ids carry their time (runtime/ids.ts): made on the node's clock, the moments posted after the move are 11
    // minutes newer, as they would be had the time passed.
    node.svc.ids = new IdGenerator(node.lease.id, now);
    const base = node.url;
    const sql = node.svc.sql;
    const get = (who: Registered, path: string) => call(base, "GET", path, { token: who.token });

    const author = await registerAgent(base, "author");
    const friend = await registerAgent(base, "friend");
    const stranger = await registerAgent(base, "stranger");
    await befriend(base, author, friend);

    // before the move: five moments, a like and a comment on one, every feed read once (timelines and records cached)
    const old = [
      await post(base, author, "public", "old 1"),
      await post(base, author, "friends", "old 2"),
      await post(base, author, "public", "old 3"),
      await post(base, author, "private", "old 4"),
      await post(base, author, "public", "old 5"),
    ];
    const liked = old[2]!.id;
    t.equal((await call(base, "POST", `/v1/moments/${liked}/like`, { token: friend.token })).status, 204);
    t.equal(
      (await call(base, "POST", `/v1/moments/${liked}/comments`, { token: friend.token, json: { body: "nice" } }))
        .status,
      201,
    );
    t.equal((await walkFeed(base, friend, 100)).ids.length, 4, "the friend sees the four moments not private");
    t.equal((await walkFeed(base, author, 100)).ids.length, 5);
    await walkFeed(base, stranger, 100);
    const firstPage = await feedPage(base, friend, "?limit=2");
    t.ok(firstPage.has_more);
    const cursor = firstPage.moments[1]!.id; // a cursor handed out before the move

    skew = 11 * MINUTE;

    t.test("past the horizon every read answers as if the moments never were", async (t) => {
      const cached = feedStats.cached;
      for (const who of [author, friend, stranger]) {
        t.same(await feedPage(base, who), { moments: [], has_more: false }, `${who.id}: the feed ends at the horizon`);
      }
      t.equal(feedStats.cached - cached, 3, "answered from the caches, cut at the horizon");
      t.same(
        await feedPage(base, friend, `?before=${cursor}`),
        { moments: [], has_more: false },
        "a cursor from before: an empty last page",
      );
      for (const m of old) {
        t.equal((await get(author, `/v1/moments/${m.id}`)).status, 404, `GET ${m.content}`);
        t.equal((await get(author, `/v1/moments/${m.id}/comments`)).status, 404, `its comments`);
      }
      const like = await call(base, "POST", `/v1/moments/${liked}/like`, { token: stranger.token });
      t.equal(like.status, 404);
      t.equal(like.body.error, "not_found");
      t.equal((await call(base, "DELETE", `/v1/moments/${liked}/like`, { token: friend.token })).status, 404, "unlike");
      const comment = await call(base, "POST", `/v1/moments/${liked}/comments`, {
        token: friend.token,
        json: { body: "late" },
      });
      t.equal(comment.status, 404);
      t.equal(
        (await call(base, "DELETE", `/v1/moments/${old[0]!.id}`, { token: author.token })).status,
        404,
        "delete: already gone",
      );
      const [row] = await sql<{ like_count: number; comment_count: number }[]>`
        select like_count, comment_count from moments where id = ${liked.slice(7)}`;
      t.same(row, { like_count: 1, comment_count: 1 }, "nothing was written to the expired moment");
    });

    t.test("moments posted after the move are visible; pages end at the horizon", async (t) => {
      const fresh = [
        await post(base, author, "public", "new 1"),
        await post(base, author, "friends", "new 2"),
        await post(base, author, "public", "new 3"),
      ];
      const ids = fresh.map((m) => m.id).reverse();
      for (const round of ["records hydrated", "records cached"]) {
        const first = await feedPage(base, friend, "?limit=2");
        t.same(
          first.moments.map((m) => m.id),
          ids.slice(0, 2),
          `${round}: the first page`,
        );
        t.ok(first.has_more);
        const last = await feedPage(base, friend, `?limit=2&before=${first.moments[1]!.id}`);
        t.same(
          last.moments.map((m) => m.id),
          ids.slice(2),
          `${round}: the last page`,
        );
        t.equal(last.has_more, false, `${round}: nothing more past the horizon`);
      }
      t.same((await walkFeed(base, stranger, 1)).ids, [fresh[2]!.id, fresh[0]!.id], "page by page to the horizon");
      // a reader whose timeline was never built: answered by Postgres, which rebuilds it without the expired ids
      const newcomer = await registerAgent(base, "newcomer");
      await befriend(base, author, newcomer);
      const miss = feedStats.miss;
      t.same(
        (await feedPage(base, newcomer)).moments.map((m) => m.id),
        ids,
        "from Postgres",
      );
      t.ok(feedStats.miss > miss);
      t.same(
        (await feedPage(base, newcomer)).moments.map((m) => m.id),
        ids,
        "from the rebuilt timeline",
      );

      const one = await get(stranger, `/v1/moments/${fresh[0]!.id}`);
      t.equal(one.status, 200);
      t.equal(one.body.content, "new 1");
      t.equal((await call(base, "POST", `/v1/moments/${fresh[0]!.id}/like`, { token: friend.token })).status, 204);
      t.equal(
        (
          await call(base, "POST", `/v1/moments/${fresh[0]!.id}/comments`, {
            token: friend.token,
            json: { body: "hi" },
          })
        ).status,
        201,
      );
      const comments = await get(stranger, `/v1/moments/${fresh[0]!.id}/comments`);
      t.same(
        comments.body.map((c: { body: string }) => c.body),
        ["hi"],
      );
      const top = (await feedPage(base, friend)).moments.find((m) => m.id === fresh[0]!.id)!;
      t.same([top.like_count, top.comment_count], [1, 1]);
    });

    t.test(
      "expireMoments removes the old rows oldest first, in bounded batches, with their likes and comments",
      async (t) => {
        const horizon = node.svc.horizons.moments();
        const oldIds = old.map((m) => m.id.slice(7));
        const left = async () =>
          (
            await sql<{ id: string }[]>`select id::text from moments where id = any(${oldIds}::bigint[]) order by id`
          ).map((r) => r.id);
        const total = async () => (await sql<{ n: number }[]>`select count(*)::int as n from moments`)[0]!.n;
        const before = await total();

        t.equal(await expireMoments(sql, horizon, 3), 3, "at most the limit");
        t.same(await left(), oldIds.slice(3), "the oldest went first");
        t.equal(await expireMoments(sql, horizon, 100), 2, "the rest");
        t.same(await left(), []);
        t.equal(await expireMoments(sql, horizon, 100), 0, "a second call removes nothing");
        t.equal(await total(), before - 5, "the moments after the horizon stay");

        const [likes] = await sql<
          { n: number }[]
        >`select count(*)::int as n from moment_likes where moment = any(${oldIds}::bigint[])`;
        const [comments] = await sql<{ n: number }[]>`
        select count(*)::int as n from moment_comments where moment = any(${oldIds}::bigint[])`;
        t.same([likes!.n, comments!.n], [0, 0], "their likes and comments went with them");
        const wrong = await sql`
        select m.id from moments m
        where m.like_count <> (select count(*) from moment_likes l where l.moment = m.id)
           or m.comment_count <> (select count(*) from moment_comments c where c.moment = m.id)`;
        t.same(wrong, [], "every remaining moment's counts match its rows");

        t.equal((await walkFeed(base, friend, 2)).ids.length, 3, "the feed reads the same as before the rows went");
        t.equal((await get(author, `/v1/moments/${old[4]!.id}`)).status, 404);
      },
    );
  });
}
