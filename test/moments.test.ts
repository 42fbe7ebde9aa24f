// Moments over HTTP on both engines and real Postgres: shapes, statuses, validation, rate limit, the
// visibility matrix for feed / get / like / unlike / comment / comment list, delete.
import t from "tap";
import { call, registerAgent } from "./helpers/http.ts";
import { type EngineKind, startTestNode } from "./helpers/node.ts";
import { befriend, feedPage, post, type Visibility } from "./helpers/social.ts";

const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

for (const engine of ["redis", "memory"] as EngineKind[]) {
  t.test(`moments (${engine} engines)`, async (t) => {
    const node = await startTestNode(t, { engine });
    const base = node.url;

    t.test("a lone surrogate in content or a comment becomes U+FFFD, in the answer as in Postgres", async (t) => {
      const a = await registerAgent(base, "poster");
      const r = await call(base, "POST", "/v1/moments", {
        token: a.token,
        json: { content: "a\udc00b", visibility: "public" },
      });
      t.equal(r.status, 201);
      t.equal(r.body.content, "a\ufffdb");
      const [row] = await node.svc.sql`select content from moments where id = ${r.body.id.slice(7)}`;
      t.equal(row?.content, "a\ufffdb");
      const c = await call(base, "POST", `/v1/moments/${r.body.id}/comments`, {
        token: a.token,
        json: { body: "\ud800!" },
      });
      t.equal(c.status, 201);
      t.equal(c.body.body, "\ufffd!");
    });

    t.test("create answers 201 with exactly id, content, visibility, created_at", async (t) => {
      const a = await registerAgent(base, "poster");
      const r = await call(base, "POST", "/v1/moments", {
        token: a.token,
        json: { content: "  hello world  ", visibility: "public" },
      });
      t.equal(r.status, 201);
      t.same(Object.keys(r.body), ["id", "content", "visibility", "created_at"]);
      t.match(r.body.id, /^moment_[0-9]+$/);
      t.equal(r.body.content, "hello world", "content is trimmed");
      t.equal(r.body.visibility, "public");
      t.match(r.body.created_at, ISO);
      const one = await call(base, "GET", `/v1/moments/${r.body.id}`, { token: a.token });
      t.equal(one.status, 200);
      t.same(one.body, {
        id: r.body.id,
        content: "hello world",
        visibility: "public",
        created_at: r.body.created_at,
        author: { id: a.id, display_name: "poster", avatar_url: null },
        like_count: 0,
        comment_count: 0,
        liked_by_me: false,
      });
      t.same(Object.keys(one.body), [
        "id",
        "content",
        "visibility",
        "created_at",
        "author",
        "like_count",
        "comment_count",
        "liked_by_me",
      ]);
    });

    t.test("invalid bodies answer 400 naming the field", async (t) => {
      const a = await registerAgent(base, "validator");
      const cases: [unknown, string][] = [
        [{ visibility: "public" }, "content"],
        [{ content: "   ", visibility: "public" }, "content"],
        [{ content: "x".repeat(2001), visibility: "public" }, "content"],
        [{ content: 5, visibility: "public" }, "content"],
        [{ content: "hi" }, "visibility"],
        [{ content: "hi", visibility: "everyone" }, "visibility"],
        [{ content: "hi", visibility: null }, "visibility"],
      ];
      for (const [json, field] of cases) {
        const r = await call(base, "POST", "/v1/moments", { token: a.token, json });
        t.equal(r.status, 400, JSON.stringify(json).slice(0, 60));
        t.equal(r.body.error, "invalid_request");
        t.equal(r.body.field, field);
      }
      const max = await call(base, "POST", "/v1/moments", {
        token: a.token,
        json: { content: "x".repeat(2000), visibility: "private" },
      });
      t.equal(max.status, 201, "2,000 characters is fine");
      const noAuth = await call(base, "POST", "/v1/moments", { json: { content: "x", visibility: "public" } });
      t.equal(noAuth.status, 401);
    });

    t.test("the 6th moment within a minute answers 429 with Retry-After", async (t) => {
      const a = await registerAgent(base, "chatty");
      for (let i = 0; i < 5; i++) await post(base, a, "private", `m${i}`);
      const r = await call(base, "POST", "/v1/moments", {
        token: a.token,
        json: { content: "six", visibility: "public" },
      });
      t.equal(r.status, 429);
      t.equal(r.body.error, "rate_limited");
      t.type(r.body.message, "string");
      t.ok(Number.isInteger(r.body.retry_after) && r.body.retry_after >= 1);
      t.equal(r.headers.get("retry-after"), String(r.body.retry_after));
      const other = await registerAgent(base, "quiet");
      t.equal(
        (await call(base, "POST", "/v1/moments", { token: other.token, json: { content: "x", visibility: "public" } }))
          .status,
        201,
        "per principal",
      );
    });

    t.test("feed query validation", async (t) => {
      const a = await registerAgent(base, "reader");
      for (const q of ["limit=0", "limit=101", "limit=abc", "limit=-1", "limit=2.5", "limit="]) {
        const r = await call(base, "GET", `/v1/moments/feed?${q}`, { token: a.token });
        t.equal(r.status, 400, q);
        t.equal(r.body.field, "limit");
      }
      for (const q of [
        "before=abc",
        "before=123",
        "before=moment_",
        "before=comment_1",
        "before=moment_99999999999999999999",
      ]) {
        const r = await call(base, "GET", `/v1/moments/feed?${q}`, { token: a.token });
        t.equal(r.status, 400, q);
        t.equal(r.body.field, "before");
      }
      t.equal((await call(base, "GET", "/v1/moments/feed?limit=100&before=moment_1", { token: a.token })).status, 200);
      const p = await feedPage(base, a);
      t.same(Object.keys(p), ["moments", "has_more"]);
    });

    t.test("visibility matrix: author, friend, stranger x public, friends, private", async (t) => {
      const author = await registerAgent(base, "author");
      const friend = await registerAgent(base, "friend");
      const stranger = await registerAgent(base, "stranger");
      await befriend(base, author, friend);
      // Warm every feed cache first, so the matrix is checked against fan-out, not only rebuilds.
      for (const v of [author, friend, stranger]) await feedPage(base, v);
      const moments = {} as Record<Visibility, string>;
      for (const vis of ["public", "friends", "private"] as Visibility[])
        moments[vis] = (await post(base, author, vis)).id;
      const sees: Record<string, Visibility[]> = {
        author: ["public", "friends", "private"],
        friend: ["public", "friends"],
        stranger: ["public"],
      };
      const viewers = { author, friend, stranger };
      const mine = new Set(Object.values(moments));

      for (const [name, viewer] of Object.entries(viewers)) {
        const visible = sees[name]!;
        const feed = await feedPage(base, viewer, "?limit=100");
        const got = feed.moments.filter((m) => mine.has(m.id)).map((m) => m.visibility);
        t.same(got.sort(), [...visible].sort(), `${name}'s feed`);
        for (const vis of ["public", "friends", "private"] as Visibility[]) {
          const id = moments[vis];
          const can = visible.includes(vis);
          const label = `${name} x ${vis}`;
          const expect = (ok: number) => (can ? ok : 404);
          const one = await call(base, "GET", `/v1/moments/${id}`, { token: viewer.token });
          t.equal(one.status, expect(200), `get ${label}`);
          if (!can) t.same(one.body.error, "not_found");
          const like = await call(base, "POST", `/v1/moments/${id}/like`, { token: viewer.token });
          t.equal(like.status, expect(204), `like ${label}`);
          if (can) t.equal(like.text, "", "204 has an empty body");
          const comment = await call(base, "POST", `/v1/moments/${id}/comments`, {
            token: viewer.token,
            json: { body: `${name} on ${vis}` },
          });
          t.equal(comment.status, expect(201), `comment ${label}`);
          const list = await call(base, "GET", `/v1/moments/${id}/comments`, { token: viewer.token });
          t.equal(list.status, expect(200), `list comments ${label}`);
          if (can) t.ok(Array.isArray(list.body), "a bare array");
        }
      }
      // Counts: one like and one comment per viewer who can see it.
      const counts = { public: 3, friends: 2, private: 1 };
      for (const vis of ["public", "friends", "private"] as Visibility[]) {
        const one = await call(base, "GET", `/v1/moments/${moments[vis]}`, { token: author.token });
        t.equal(one.body.like_count, counts[vis], `${vis} likes`);
        t.equal(one.body.comment_count, counts[vis], `${vis} comments`);
        const list = await call(base, "GET", `/v1/moments/${moments[vis]}/comments`, { token: author.token });
        t.same(
          list.body.map((c: { author: { id: string } }) => c.author.id),
          [author.id, friend.id, stranger.id].slice(0, counts[vis]),
          "comments oldest first",
        );
      }
      for (const [name, viewer] of Object.entries(viewers)) {
        for (const vis of ["public", "friends", "private"] as Visibility[]) {
          const r = await call(base, "DELETE", `/v1/moments/${moments[vis]}/like`, { token: viewer.token });
          t.equal(r.status, sees[name]!.includes(vis) ? 204 : 404, `unlike ${name} x ${vis}`);
        }
      }
      for (const vis of ["public", "friends", "private"] as Visibility[]) {
        const one = await call(base, "GET", `/v1/moments/${moments[vis]}`, { token: author.token });
        t.equal(one.body.like_count, 0, `${vis} likes after unlike`);
      }
    });

    t.test("like is idempotent; unliking what is not liked is 204; missing moments 404", async (t) => {
      const a = await registerAgent(base, "liker");
      const m = await post(base, a, "public");
      for (let i = 0; i < 2; i++) {
        const r = await call(base, "POST", `/v1/moments/${m.id}/like`, { token: a.token });
        t.equal(r.status, 204);
        t.equal(r.text, "");
      }
      t.equal((await call(base, "GET", `/v1/moments/${m.id}`, { token: a.token })).body.like_count, 1);
      for (let i = 0; i < 2; i++)
        t.equal((await call(base, "DELETE", `/v1/moments/${m.id}/like`, { token: a.token })).status, 204);
      t.equal((await call(base, "GET", `/v1/moments/${m.id}`, { token: a.token })).body.like_count, 0);
      for (const id of ["moment_1", "moment_abc", "123", "feedx"]) {
        t.equal((await call(base, "POST", `/v1/moments/${id}/like`, { token: a.token })).status, 404, id);
        t.equal((await call(base, "DELETE", `/v1/moments/${id}/like`, { token: a.token })).status, 404, id);
        t.equal((await call(base, "GET", `/v1/moments/${id}/comments`, { token: a.token })).status, 404, id);
        t.equal((await call(base, "GET", `/v1/moments/${id}`, { token: a.token })).status, 404, id);
      }
    });

    t.test("delete: only the author, 204, then gone everywhere", async (t) => {
      const a = await registerAgent(base, "deleter");
      const b = await registerAgent(base, "watcher");
      await feedPage(base, b);
      const m = await post(base, a, "public");
      t.ok((await feedPage(base, b, "?limit=100")).moments.some((x) => x.id === m.id));
      t.equal((await call(base, "DELETE", `/v1/moments/${m.id}`, { token: b.token })).status, 404, "not the author");
      const d = await call(base, "DELETE", `/v1/moments/${m.id}`, { token: a.token });
      t.equal(d.status, 204);
      t.equal(d.text, "");
      t.notOk(
        (await feedPage(base, b, "?limit=100")).moments.some((x) => x.id === m.id),
        "gone from the feed at once",
      );
      t.equal((await call(base, "GET", `/v1/moments/${m.id}`, { token: a.token })).status, 404);
      t.equal((await call(base, "POST", `/v1/moments/${m.id}/like`, { token: b.token })).status, 404);
      t.equal((await call(base, "DELETE", `/v1/moments/${m.id}`, { token: a.token })).status, 404, "already gone");
    });
  });
}
