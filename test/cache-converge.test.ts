// Caches converge to Postgres on their own: a like made while Redis is down (its cache update failed) shows in the
// feed's like_count within about a second of Redis coming back, here restarted from its AOF with the old record.
import t from "tap";
import { call, registerAgent } from "./helpers/http.ts";
import { startTestNode } from "./helpers/node.ts";
import { PrivateRedis } from "./helpers/private-servers.ts";
import { until } from "./helpers/wait.ts";

t.test("a like made during a Redis outage reaches the feed's cached record after Redis returns from AOF", async (t) => {
  const redis = await PrivateRedis.start(t, { aof: true });
  const node = await startTestNode(t, { env: { REDIS_URL: redis.url, REDIS_PREFIX: "conv:" }, prefix: "conv:" });
  const a = await registerAgent(node.url, "a");
  const b = await registerAgent(node.url, "b");
  const m = await call(node.url, "POST", "/v1/moments", {
    token: a.token,
    json: { content: "hi", visibility: "public" },
  });
  t.equal(m.status, 201);
  const likeCount = async () => {
    const feed = await call(node.url, "GET", "/v1/moments/feed", { token: b.token });
    if (feed.status !== 200) return -1;
    const mine = (feed.body.moments as { id: string; like_count: number }[]).find((x) => x.id === m.body.id);
    return mine?.like_count ?? -1;
  };
  t.equal(await likeCount(), 0); // the record is cached (and in the AOF)
  t.equal(await likeCount(), 0);

  await redis.kill();
  const like = await call(node.url, "POST", `/v1/moments/${m.body.id}/like`, { token: b.token });
  t.equal(like.status, 204, `like during the outage: ${like.text}`);
  t.equal((await call(node.url, "GET", `/v1/moments/${m.body.id}`, { token: b.token })).body.like_count, 1);

  await redis.restart();
  const took = await until(async () => (await likeCount()) === 1, {
    ms: 5000,
    every: 50,
    what: "the feed's like_count 1",
  });
  t.ok(took < 2000, `feed shows the like ${Math.round(took)} ms after Redis`);
});
