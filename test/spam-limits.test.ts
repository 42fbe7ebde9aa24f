// The spam limits (issue 53; runtime/moderation/spam.ts): the same text too often answers 429 duplicate_content, and a
// new account's first hour has hourly limits of its own for moments, comments and friend requests; each value is
// configuration. The clock is driven by hand.
import t from "tap";
import { POLICIES } from "../runtime/limits/policies.ts";
import { call, registerAgent } from "./helpers/http.ts";
import { startTestNode } from "./helpers/node.ts";

const comment = (url: string, token: string, moment: string, body: string) =>
  call(url, "POST", `/v1/moments/${moment}/comments`, { token, json: { body } });
const moment = (url: string, token: string, content: string) =>
  call(url, "POST", "/v1/moments", { token, json: { content, visibility: "public" } });

t.test("the duplicate limit", async (t) => {
  let now = Date.now();
  const node = await startTestNode(t, { now: () => now });
  const a = await registerAgent(node.url, "a");
  const b = await registerAgent(node.url, "b");
  const m = (await moment(node.url, b.token, "a place to comment")).body.id;
  const limit = POLICIES.duplicate_content.limit;
  for (let i = 0; i < limit; i++)
    t.equal((await comment(node.url, a.token, m, "Buy NOW")).status, 201, `copy ${i + 1}`);
  // the same text once normalized: case, Unicode compatibility forms and runs of spaces do not make it another
  const again = await comment(node.url, a.token, m, "  ｂuy   now ");
  t.equal(again.status, 429);
  t.equal(again.body.error, "duplicate_content");
  t.ok(Number(again.headers.get("retry-after")) >= 1, "Retry-After");
  t.equal(again.body.retry_after, Number(again.headers.get("retry-after")));
  t.equal(
    (await moment(node.url, a.token, "buy now")).body.error,
    "duplicate_content",
    "moments and comments together",
  );
  t.equal((await comment(node.url, a.token, m, "something else")).status, 201, "another text passes");
  t.equal((await comment(node.url, b.token, m, "buy now")).status, 201, "another principal's bucket is its own");
  // a refill: the window over the limit per copy
  now += (POLICIES.duplicate_content.window * 1000) / limit + 1000;
  t.equal((await comment(node.url, a.token, m, "buy now")).status, 201, "one more after its share of the window");
  t.equal((await comment(node.url, a.token, m, "buy now")).status, 429);
  const banned = await call(node.url, "GET", "/v1/agents/me", { token: a.token });
  t.equal(banned.status, 200, "duplicates strike nothing toward a ban");
});

t.test("the duplicate limit's configuration", async (t) => {
  const node = await startTestNode(t, { env: { FLOCK_DUPLICATE_LIMIT: "1", FLOCK_DUPLICATE_WINDOW: "3600" } });
  const a = await registerAgent(node.url, "a");
  const m = (await moment(node.url, a.token, "hello")).body.id;
  t.equal((await comment(node.url, a.token, m, "hello")).body.error, "duplicate_content", "the moment's text counted");
  const r = await comment(node.url, a.token, m, "other");
  t.equal(r.status, 201);
  const again = await comment(node.url, a.token, m, "other");
  t.equal(again.status, 429);
  t.ok(Number(again.headers.get("retry-after")) > 3000, "one per hour");
});

t.test("a new account's limits, and their end after its first hour", async (t) => {
  let now = Date.now();
  const node = await startTestNode(t, { now: () => now });
  const a = await registerAgent(node.url, "newbie");
  const b = await registerAgent(node.url, "target");
  const m = (await moment(node.url, b.token, "post")).body.id;

  t.test("comments", async (t) => {
    const limit = POLICIES.new_account_comments.limit;
    for (let i = 0; i < limit; i++) t.equal((await comment(node.url, a.token, m, `c${i}`)).status, 201);
    const over = await comment(node.url, a.token, m, "one more");
    t.equal(over.status, 429);
    t.equal(over.body.error, "rate_limited");
    t.match(over.headers.get("ratelimit-policy"), /"new_account_comments";q=20;w=3600/);
  });

  t.test("moments", async (t) => {
    let posted = 0;
    // 5 a minute (the moments policy), 10 in the first hour
    for (let i = 0; posted < POLICIES.new_account_moments.limit && i < 30; i++) {
      const r = await moment(node.url, a.token, `m${i}`);
      if (r.status === 201) posted++;
      else now += 60_000;
    }
    t.equal(posted, POLICIES.new_account_moments.limit);
    now += 60_000;
    const over = await moment(node.url, a.token, "eleven");
    t.equal(over.status, 429);
    t.match(over.headers.get("ratelimit-policy"), /"new_account_moments"/);
  });

  t.test("friend requests", async (t) => {
    const others = await Promise.all(
      Array.from({ length: POLICIES.new_account_friend_requests.limit + 1 }, (_, i) =>
        registerAgent(node.url, `o${i}`),
      ),
    );
    for (const o of others.slice(0, -1)) {
      t.equal(
        (await call(node.url, "POST", "/v1/friends/request", { token: a.token, json: { to: o.id } })).status,
        201,
      );
    }
    now += 60_000; // the route's own bucket (30 a minute) is full again: the hourly one still refuses
    const over = await call(node.url, "POST", "/v1/friends/request", {
      token: a.token,
      json: { to: others.at(-1)!.id },
    });
    t.equal(over.status, 429);
    t.match(over.headers.get("ratelimit-policy"), /"new_account_friend_requests"/);
  });

  t.test("an hour later the account is no longer new", async (t) => {
    now += 3_600_000;
    t.equal((await comment(node.url, a.token, m, "grown up")).status, 201);
    t.equal((await moment(node.url, a.token, "grown up too")).status, 201);
  });
});

t.test("the new-account limits' configuration", async (t) => {
  const node = await startTestNode(t, { env: { FLOCK_NEW_ACCOUNT_COMMENTS: "2", FLOCK_NEW_ACCOUNT_MOMENTS: "1" } });
  const a = await registerAgent(node.url, "a");
  t.equal((await moment(node.url, a.token, "one")).status, 201);
  t.equal((await moment(node.url, a.token, "two")).status, 429, "FLOCK_NEW_ACCOUNT_MOMENTS");
  const b = await registerAgent(node.url, "b");
  const m = (await moment(node.url, b.token, "x")).body.id;
  t.equal((await comment(node.url, a.token, m, "1")).status, 201);
  t.equal((await comment(node.url, a.token, m, "2")).status, 201);
  t.equal((await comment(node.url, a.token, m, "3")).status, 429, "FLOCK_NEW_ACCOUNT_COMMENTS");

  const off = await startTestNode(t, { env: { FLOCK_NEW_ACCOUNT_AGE: "0", FLOCK_NEW_ACCOUNT_COMMENTS: "1" } });
  const c = await registerAgent(off.url, "c");
  const m2 = (await moment(off.url, c.token, "y")).body.id;
  for (let i = 0; i < 3; i++)
    t.equal((await comment(off.url, c.token, m2, `k${i}`)).status, 201, "FLOCK_NEW_ACCOUNT_AGE=0: off");
  await t.rejects(startTestNode(t, { env: { FLOCK_DUPLICATE_LIMIT: "0" } }), /FLOCK_DUPLICATE_LIMIT/);
});
