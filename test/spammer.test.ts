// The spammer scenario (issue 53): ten new agents post one text on a hundred public moments, as comments. The
// duplicate limit stops each at its third copy and the new-account limit stops their variations; a report reaches
// the queue; a moderator suspends all ten in one call, removing what they wrote; it is gone from the feed, the
// moments' comments and search, on another node too; the audit log shows each suspension.
import t from "tap";
import { POLICIES } from "../runtime/limits/policies.ts";
import { grantModerator } from "../runtime/moderation/moderation-store.ts";
import { call, randomIp, registerAgent, type Registered } from "./helpers/http.ts";
import { startTestNode } from "./helpers/node.ts";

const SPAM = "Earn 500% in a day: flock-gold.example";

t.test("ten spammers on a hundred moments", async (t) => {
  const one = await startTestNode(t);
  const two = await startTestNode(t, { schema: one.schema, prefix: one.prefix });
  const mod = await registerAgent(one.url, "moderator");
  await grantModerator(one.svc.sql, mod.id);
  const reader = await registerAgent(one.url, "reader");

  // a hundred public moments by twenty authors (five each: the moments policy's burst)
  const authors = await Promise.all(Array.from({ length: 20 }, (_, i) => registerAgent(one.url, `author${i}`)));
  const moments: string[] = [];
  for (const a of authors) {
    for (let i = 0; i < 5; i++) {
      const r = await call(one.url, "POST", "/v1/moments", {
        token: a.token,
        json: { content: `${a.display_name} moment ${i}`, visibility: "public" },
      });
      t.equal(r.status, 201, r.text);
      moments.push(r.body.id);
    }
  }
  t.equal(moments.length, 100);

  const spammers = await Promise.all(Array.from({ length: 10 }, (_, i) => registerAgent(one.url, `spammer${i}`)));
  const ipOf = new Map(spammers.map((s) => [s.id, randomIp()]));
  const as = (s: Registered) => ({ token: s.token, headers: { "x-forwarded-for": ipOf.get(s.id)! } });
  const dupLimit = POLICIES.duplicate_content.limit;
  const newLimit = POLICIES.new_account_comments.limit;

  await Promise.all(
    spammers.map(async (s) => {
      // its own moment and a message carry the text too
      t.equal(
        (await call(one.url, "POST", "/v1/moments", { ...as(s), json: { content: SPAM, visibility: "public" } }))
          .status,
        201,
      );
      t.equal(
        (await call(one.url, "POST", "/v1/messages", { ...as(s), json: { to: reader.id, body: SPAM } })).status,
        201,
      );
      const statuses: Record<string, number> = {};
      for (const m of moments) {
        const r = await call(one.url, "POST", `/v1/moments/${m}/comments`, { ...as(s), json: { body: SPAM } });
        const k = r.status === 201 ? "created" : r.body.error;
        statuses[k] = (statuses[k] ?? 0) + 1;
      }
      t.same(
        statuses,
        { created: dupLimit - 1, duplicate_content: 100 - (dupLimit - 1) },
        `${s.display_name}: the duplicate limit`,
      );
      // varied text: the new-account limit stops it
      let varied = 0;
      let refused;
      for (const m of moments) {
        const r = await call(one.url, "POST", `/v1/moments/${m}/comments`, {
          ...as(s),
          json: { body: `${SPAM} #${varied}` },
        });
        if (r.status !== 201) {
          refused = r;
          break;
        }
        varied++;
      }
      t.equal(varied, newLimit - (dupLimit - 1), `${s.display_name}: the new-account limit`);
      t.equal(refused?.status, 429);
      t.match(refused?.headers.get("ratelimit-policy"), /new_account_comments/);
    }),
  );
  const spamComments = spammers.length * newLimit;
  /** Every moment of the reader's feed, page after page. */
  const counted = async (url: string) => {
    const all: { id: string; author: { id: string }; comment_count: number }[] = [];
    for (let before = ""; ;) {
      const page = await call(url, "GET", `/v1/moments/feed?limit=100${before}`, { token: reader.token });
      all.push(...page.body.moments);
      if (!page.body.has_more) return all;
      before = `&before=${all.at(-1)!.id}`;
    }
  };
  const before = await counted(two.url);
  t.equal(
    before.reduce((n, m) => n + m.comment_count, 0),
    spamComments,
    "the feed counts every spam comment that got through",
  );

  const victimMoment = moments[0]!;
  const list = await call(two.url, "GET", `/v1/moments/${victimMoment}/comments`, { token: reader.token });
  t.ok(list.body.length > 0);
  const reported = await call(two.url, "POST", "/v1/reports", {
    token: reader.token,
    json: { target: "comment", id: list.body[0].id, reason: "spam", details: "the gold one again" },
  });
  t.equal(reported.status, 201);
  const queue = await call(one.url, "GET", "/v1/moderation/reports", { token: mod.token });
  t.equal(queue.body.reports.length, 1, "the report reached the queue");
  t.equal(queue.body.reports[0].target_owner, list.body[0].author.id);
  t.equal(queue.body.reports[0].target_now.text, list.body[0].body, "the queue shows what was reported");

  const suspended = await call(one.url, "POST", "/v1/moderation/suspensions", {
    token: mod.token,
    json: { principals: spammers.map((s) => s.id), reason: "gold spam wave", remove_content: true },
  });
  t.equal(suspended.status, 200, suspended.text);
  t.same([...suspended.body.principals].sort(), spammers.map((s) => s.id).sort(), "one call suspends all ten");
  t.same(suspended.body.removed, { moments: 10, comments: spamComments, messages: 10 });

  for (const s of spammers) {
    const r = await call(two.url, "GET", "/v1/moments/feed", as(s));
    t.equal(r.body.error, "suspended", `${s.display_name} is refused on the other node`);
  }
  for (const url of [one.url, two.url]) {
    const feed = await counted(url);
    t.notOk(
      feed.some((m) => spammers.some((s) => s.id === m.author.id)),
      "their moments left the feed",
    );
    t.equal(
      feed.reduce((n, m) => n + m.comment_count, 0),
      0,
      "no moment counts a spam comment",
    );
  }
  for (const m of moments.slice(0, 10)) {
    t.same(
      (await call(two.url, "GET", `/v1/moments/${m}/comments`, { token: reader.token })).body,
      [],
      `${m}: no comments`,
    );
  }
  const search = await call(two.url, "GET", `/v1/search/messages?q=${encodeURIComponent("flock-gold")}`, {
    token: reader.token,
  });
  t.equal(search.status, 200);
  t.same(search.body.messages, [], "their messages are out of search");
  t.same(
    (await call(one.url, "GET", "/v1/moderation/reports", { token: mod.token })).body.reports,
    [],
    "the report was resolved",
  );

  const audit = await call(two.url, "GET", "/v1/moderation/audit?limit=100", { token: mod.token });
  const suspensions = audit.body.entries.filter((e: { action: string }) => e.action === "suspend");
  t.equal(suspensions.length, 10, "the audit log shows each suspension");
  for (const e of suspensions) {
    t.equal(e.moderator, mod.id);
    t.equal(e.reason, "gold spam wave");
    t.equal(e.details.remove_content, true);
    t.equal(e.details.removed.comments, newLimit);
  }
  t.equal(
    suspensions.reduce((n: number, e: { details: { reports_resolved: number } }) => n + e.details.reports_resolved, 0),
    1,
  );
});
