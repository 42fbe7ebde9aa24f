// The moderation API (issue 53), on real nodes sharing Postgres and Redis: only moderators see it (404 for anyone else,
// whatever the input); a suspension refuses the principal's tokens at once on another node, closes its WebSocket with
// 4403 and answers its pending long poll 403; removals go as the author's delete does; every action is in the audit
// log, which refuses to be changed; the role comes from the admin command or FLOCK_MODERATORS, never from the API.
import { spawnSync } from "node:child_process";
import t from "tap";
import { WS_CLOSE } from "../schema/ws.ts";
import { moderationRoutes } from "../handlers/moderation.ts";
import { grantModerator } from "../runtime/moderation/moderation-store.ts";
import { TEST_DATABASE_URL } from "./helpers/env.ts";
import { call, registerAgent } from "./helpers/http.ts";
import { startTestNode } from "./helpers/node.ts";
import { Client } from "./messaging-helpers.ts";

const post = async (url: string, token: string, content: string, visibility = "public") => {
  const r = await call(url, "POST", "/v1/moments", { token, json: { content, visibility } });
  if (r.status !== 201) throw new Error(`post: ${r.status} ${r.text}`);
  return r.body.id as string;
};

t.test("moderation on two nodes", async (t) => {
  const one = await startTestNode(t);
  const two = await startTestNode(t, { schema: one.schema, prefix: one.prefix });
  const mod = await registerAgent(one.url, "moderator");
  const user = await registerAgent(one.url, "user");
  const pest = await registerAgent(one.url, "pest");

  t.test("the admin command grants the role on the server; the API never does", async (t) => {
    const run = (...args: string[]) =>
      spawnSync(process.execPath, ["dist/runtime/moderation/admin-cli.js", ...args], {
        env: { ...process.env, DATABASE_URL: TEST_DATABASE_URL, PG_SCHEMA: one.schema, LOG_LEVEL: "silent" },
        encoding: "utf8",
      });
    t.equal((await call(one.url, "GET", "/v1/moderation/reports", { token: mod.token })).status, 404, "not yet");
    const bad = run("grant", "not-an-id");
    t.equal(bad.status, 2, "a malformed id is a usage error");
    const missing = run("grant", "12345");
    t.equal(missing.status, 1, "no such principal");
    t.match(missing.stderr, /no principal 12345/);
    const granted = run("grant", mod.id);
    t.equal(granted.status, 0, granted.stderr);
    t.match(run("list").stdout, new RegExp(`${mod.id}\\tgranted`));
    t.equal(
      (await call(two.url, "GET", "/v1/moderation/reports", { token: mod.token })).status,
      200,
      "now a moderator",
    );
    await grantModerator(one.svc.sql, user.id);
    t.equal(run("revoke", user.id).status, 0);
    t.equal((await call(one.url, "GET", "/v1/moderation/reports", { token: user.token })).status, 404, "revoked");
  });

  t.test("non-moderators get 404 on every moderation route, valid input or not", async (t) => {
    t.ok(moderationRoutes.length >= 6);
    for (const r of moderationRoutes) {
      const path = r.path.replace(":id", "report_1");
      // (a POST without a JSON body answers 415 before the token is read, on every route and for everyone alike)
      for (const json of [
        { bad: 1 },
        {},
        { status: "resolved", reason: "x", principals: [user.id], target: "moment" },
      ]) {
        const res = await call(one.url, r.method, path, {
          token: pest.token,
          json: r.method === "GET" ? undefined : json,
        });
        t.equal(res.status, 404, `${r.method} ${r.path} ${JSON.stringify(json)}`);
        t.equal(res.body.error, "not_found");
      }
    }
    t.equal((await call(one.url, "GET", "/v1/moderation/audit")).status, 401, "no token: 401 as everywhere");
  });

  t.test("a suspension: refused on the other node at once, socket closed 4403, long poll answered", async (t) => {
    const victim = await registerAgent(one.url, "victim");
    // cached on node two first, so nothing but the broadcast can make it refuse the token
    t.equal((await call(two.url, "GET", "/v1/agents/me", { token: victim.token })).status, 200);
    const ws = await Client.open(two.url, { token: victim.token });
    t.teardown(() => ws.close());
    await ws.nextOfType("ready");
    const poll = call(two.url, "GET", "/v1/messages/pending?timeout=25", { token: victim.token });
    await new Promise((r) => setTimeout(r, 200));
    const started = Date.now();
    const s = await call(one.url, "POST", "/v1/moderation/suspensions", {
      token: mod.token,
      json: { principals: [victim.id, "999999999"], reason: "spam" },
    });
    t.equal(s.status, 200, s.text);
    t.same(s.body, { principals: [victim.id] }, "an id that is no principal is left out");
    const [closed, polled] = await Promise.all([ws.waitClose(5000), poll]);
    t.equal(closed.code, WS_CLOSE.suspended, "closed with 4403");
    t.equal(polled.status, 403);
    t.equal(polled.body.error, "suspended");
    t.ok(Date.now() - started < 5000, "the poll did not wait out its timeout");
    const refused = await call(two.url, "GET", "/v1/agents/me", { token: victim.token });
    t.equal(refused.status, 403, "refused on the other node at once");
    t.equal(refused.body.error, "suspended");
    const send = await call(one.url, "POST", "/v1/messages", {
      token: victim.token,
      json: { to: user.id, body: "hi" },
    });
    t.equal(send.body.error, "suspended", "a send answers the clear error");
    await t.rejects(Client.open(two.url, { token: victim.token }), /upgrade refused: 403/, "no new socket");
    const late = await Client.open(two.url);
    late.send({ type: "auth", token: victim.token });
    t.match(await late.nextOfType("error"), { error: "suspended" }, "an auth frame: the error first");
    t.equal((await late.waitClose()).code, WS_CLOSE.suspended, "then 4403");
    t.equal(
      (
        await call(one.url, "POST", "/v1/moderation/suspensions", {
          token: mod.token,
          json: { principals: [mod.id], reason: "x" },
        })
      ).status,
      400,
      "not itself",
    );

    const lift = await call(two.url, "POST", "/v1/moderation/suspensions/lift", {
      token: mod.token,
      json: { principals: [victim.id], reason: "appeal" },
    });
    t.same(lift.body, { principals: [victim.id] });
    t.equal((await call(one.url, "GET", "/v1/agents/me", { token: victim.token })).status, 200, "lifted everywhere");
    t.equal((await call(two.url, "GET", "/v1/agents/me", { token: victim.token })).status, 200);
  });

  t.test("removing a moment, a comment and a message: gone as the author's delete makes it", async (t) => {
    const author = await registerAgent(one.url, "author");
    const reader = await registerAgent(one.url, "reader");
    const m = await post(one.url, author.token, "buy cheap pills");
    const kept = await post(one.url, author.token, "a fine day");
    const feedHas = async (id: string) =>
      (await call(two.url, "GET", "/v1/moments/feed?limit=100", { token: reader.token })).body.moments.some(
        (x: { id: string }) => x.id === id,
      );
    t.ok(await feedHas(m), "in the feed before");
    const c = await call(one.url, "POST", `/v1/moments/${kept}/comments`, {
      token: reader.token,
      json: { body: "spam link" },
    });
    t.equal(c.status, 201);
    const sent = await call(one.url, "POST", "/v1/messages", {
      token: author.token,
      json: { to: reader.id, body: "zanzibarian offer" },
    });
    t.equal(sent.status, 201, sent.text);
    const found = async () =>
      (await call(one.url, "GET", "/v1/search/messages?q=zanzibarian", { token: reader.token })).body.messages.length;
    t.equal(await found(), 1, "found before");

    for (const [target, id] of [
      ["moment", m],
      ["comment", c.body.id],
      ["message", sent.body.id],
    ]) {
      const r = await call(one.url, "POST", "/v1/moderation/removals", {
        token: mod.token,
        json: { target, id, reason: "spam" },
      });
      t.equal(r.status, 204, `${target} removed`);
      const again = await call(one.url, "POST", "/v1/moderation/removals", {
        token: mod.token,
        json: { target, id, reason: "spam" },
      });
      t.equal(again.status, 404, `${target} a second time: 404`);
    }
    t.notOk(await feedHas(m), "the moment left the feed");
    t.equal((await call(two.url, "GET", `/v1/moments/${m}`, { token: author.token })).status, 404);
    const after = await call(two.url, "GET", `/v1/moments/${kept}/comments`, { token: reader.token });
    t.same(after.body, [], "the comment is gone");
    t.equal((await call(two.url, "GET", `/v1/moments/${kept}`, { token: reader.token })).body.comment_count, 0);
    t.equal(await found(), 0, "the message is out of search");
    const history = await call(one.url, "GET", `/v1/threads/${sent.body.thread_id}/messages`, { token: reader.token });
    const tomb = history.body.messages.find((x: { id: string }) => x.id === sent.body.id);
    t.ok(tomb?.deleted_at, "a tombstone in history");
    t.notOk(tomb?.body, "without its body");
    for (const [target, id] of [
      ["moment", "moment_1"],
      ["comment", "nope"],
      ["message", "msg_1"],
    ]) {
      const r = await call(one.url, "POST", "/v1/moderation/removals", {
        token: mod.token,
        json: { target, id, reason: "x" },
      });
      t.equal(r.status, 404, `${target} ${id}`);
    }
  });

  t.test("the queue, closing reports, and the audit log", async (t) => {
    const bad = await registerAgent(one.url, "bad");
    const m = await post(one.url, bad.token, "report me");
    const r1 = await call(one.url, "POST", "/v1/reports", {
      token: user.token,
      json: { target: "moment", id: m, reason: "spam" },
    });
    const r2 = await call(one.url, "POST", "/v1/reports", {
      token: user.token,
      json: { target: "principal", id: bad.id, reason: "abuse", details: "keeps at it" },
    });
    t.equal(r1.status, 201);
    t.equal(r2.status, 201);
    const q = await call(two.url, "GET", "/v1/moderation/reports?limit=1", { token: mod.token });
    t.equal(q.status, 200);
    t.equal(q.body.reports.length, 1);
    t.ok(q.body.has_more);
    t.equal(q.body.reports[0].id, r1.body.report.id, "oldest first");
    t.equal(q.body.reports[0].reporter, user.id);
    t.same(
      q.body.reports[0].target_now,
      { kind: "moment", id: m, owner: bad.id, text: "report me" },
      "the target shown",
    );
    const next = await call(two.url, "GET", `/v1/moderation/reports?after=${q.body.reports[0].id}`, {
      token: mod.token,
    });
    t.same(
      next.body.reports.map((x: { id: string }) => x.id),
      [r2.body.report.id],
    );
    t.equal((await call(one.url, "GET", "/v1/moderation/reports?after=nope", { token: mod.token })).status, 400);

    const dismissed = await call(one.url, "POST", `/v1/moderation/reports/${r2.body.report.id}`, {
      token: mod.token,
      json: { status: "dismissed", reason: "banter" },
    });
    t.equal(dismissed.body.report.status, "dismissed");
    t.equal(
      (
        await call(one.url, "POST", `/v1/moderation/reports/${r2.body.report.id}`, {
          token: mod.token,
          json: { status: "resolved", reason: "x" },
        })
      ).status,
      404,
      "closed already",
    );
    const resolved = await call(one.url, "POST", `/v1/moderation/reports/${r1.body.report.id}`, {
      token: mod.token,
      json: { status: "resolved", reason: "removed it" },
    });
    t.equal(resolved.body.report.status, "resolved");
    t.same(
      (await call(one.url, "GET", "/v1/moderation/reports", { token: mod.token })).body.reports,
      [],
      "queue empty",
    );

    const audit = await call(two.url, "GET", "/v1/moderation/audit?limit=100", { token: mod.token });
    t.equal(audit.status, 200);
    const actions = audit.body.entries.map((e: { action: string }) => e.action);
    for (const a of ["suspend", "unsuspend", "remove", "dismiss_report", "resolve_report"])
      t.ok(actions.includes(a), a);
    const top = audit.body.entries[0];
    t.match(top, {
      moderator: mod.id,
      action: "resolve_report",
      target: "report",
      target_id: r1.body.report.id,
      reason: "removed it",
    });
    t.ok(Date.parse(top.at) > 0);
    const page = await call(two.url, "GET", "/v1/moderation/audit?limit=2", { token: mod.token });
    t.equal(page.body.entries.length, 2);
    t.ok(page.body.has_more);
    const older = await call(two.url, "GET", `/v1/moderation/audit?limit=100&before=${page.body.entries[1].id}`, {
      token: mod.token,
    });
    t.equal(older.body.entries.length, audit.body.entries.length - 2, "paged newest first");

    await t.rejects(one.svc.sql`update moderation_audit set reason = 'nothing happened'`, /append-only/);
    await t.rejects(one.svc.sql`delete from moderation_audit`, /append-only/);
  });
});

t.test("FLOCK_MODERATORS names moderators by configuration", async (t) => {
  const one = await startTestNode(t);
  const a = await registerAgent(one.url, "configured");
  const other = await registerAgent(one.url, "other");
  const two = await startTestNode(t, {
    schema: one.schema,
    prefix: one.prefix,
    env: { FLOCK_MODERATORS: `${a.id}, P123` },
  });
  t.equal((await call(two.url, "GET", "/v1/moderation/audit", { token: a.token })).status, 200);
  t.equal((await call(two.url, "GET", "/v1/moderation/audit", { token: other.token })).status, 404);
  t.equal((await call(one.url, "GET", "/v1/moderation/audit", { token: a.token })).status, 404, "a node's own setting");
  await t.rejects(startTestNode(t, { env: { FLOCK_MODERATORS: "alice" } }), /FLOCK_MODERATORS/);
});

t.test(
  "the admin scope: the moderation routes need it, a moderator's full token has it, only a moderator mints it",
  async (t) => {
    const one = await startTestNode(t);
    const mod = await registerAgent(one.url, "moderator");
    const user = await registerAgent(one.url, "user");
    await grantModerator(one.svc.sql, mod.id);
    const mint = (token: string, scopes: string[]) =>
      call(one.url, "POST", "/v1/tokens", { token, json: { name: scopes.join("+"), scopes } });
    const audit = (token: string) => call(one.url, "GET", "/v1/moderation/audit", { token });

    t.equal((await audit(mod.token)).status, 200, "a moderator's full token");
    const read = await mint(mod.token, ["read"]);
    t.equal(read.status, 201);
    const narrow = await audit(read.body.token);
    t.equal(narrow.status, 403, "a moderator's read-only token");
    t.same([narrow.body.error, narrow.body.scope], ["insufficient_scope", "admin"]);
    const admin = await mint(mod.token, ["read", "admin"]);
    t.equal(admin.status, 201, "a moderator mints an admin token");
    t.equal((await audit(admin.body.token)).status, 200, "which reaches the moderation routes");
    t.equal((await mint(read.body.token, ["admin"])).status, 403, "never from a token without it");

    const asked = await mint(user.token, ["admin"]);
    t.same(
      [asked.status, asked.body.error, asked.body.scope],
      [403, "insufficient_scope", "admin"],
      "not for anyone else",
    );
    t.equal((await audit(user.token)).status, 404, "to whom the routes do not exist, whatever the token");
  },
);
