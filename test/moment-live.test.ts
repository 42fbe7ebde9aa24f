// Moments for each reader and live: every moment a read answers says whether its reader liked it (`liked_by_me`,
// per reader, on cached and Postgres pages alike), and the WebSocket brings a moment's new counts (`moment_counts`) and
// a friend's new moment (`moment`) to those who may see it, and a friendship made or ended (`friendship`) to both sides.
import t from "tap";
import { call, ok, type Registered, registerAgent } from "./helpers/http.ts";
import { startTestNode } from "./helpers/node.ts";
import { befriend, post } from "./helpers/social.ts";
import { Client } from "./messaging-helpers.ts";

const node = await startTestNode(t);
const base = node.url;

interface Shown {
  id: string;
  like_count: number;
  comment_count: number;
  liked_by_me: boolean;
}

const feed = async (who: Registered, query = "?limit=50"): Promise<Shown[]> => {
  const r = await call(base, "GET", `/v1/moments/feed${query}`, { token: who.token });
  if (r.status !== 200) throw new Error(`feed: ${r.status} ${r.text}`);
  return r.body.moments;
};
const inFeed = async (who: Registered, id: string) => (await feed(who)).find((m) => m.id === id);
const one = async (who: Registered, id: string): Promise<Shown> =>
  (await call(base, "GET", `/v1/moments/${id}`, { token: who.token })).body;
const like = (who: Registered, id: string) =>
  ok(call(base, "POST", `/v1/moments/${id}/like`, { token: who.token }), 204);
const unlike = (who: Registered, id: string) =>
  ok(call(base, "DELETE", `/v1/moments/${id}/like`, { token: who.token }), 204);

t.test("liked_by_me: each reader's own, in the feed (cached or not) and by id", async (t) => {
  const author = await registerAgent(base, "Author");
  const fan = await registerAgent(base, "Fan");
  const other = await registerAgent(base, "Other");
  await befriend(base, author, fan);
  await befriend(base, author, other);
  const pub = await post(base, author, "public");
  const mine = await post(base, author, "friends");
  t.same((await inFeed(fan, mine.id))?.liked_by_me, false, "not liked yet");
  await like(fan, mine.id);
  for (let i = 0; i < 2; i++) {
    // the second read is answered from the record cache the first filled
    t.match(await inFeed(fan, mine.id), { like_count: 1, liked_by_me: true }, `the liker's feed, read ${i + 1}`);
    t.match(await inFeed(other, mine.id), { like_count: 1, liked_by_me: false }, `another reader's, read ${i + 1}`);
    t.match(await inFeed(author, mine.id), { like_count: 1, liked_by_me: false }, `the author's, read ${i + 1}`);
  }
  t.equal((await inFeed(fan, pub.id))?.liked_by_me, false, "a moment of the same page not liked");
  t.match(await one(fan, mine.id), { like_count: 1, liked_by_me: true }, "by id, the liker");
  t.match(await one(other, mine.id), { like_count: 1, liked_by_me: false }, "by id, another");

  // a reader with a mute is answered by Postgres (runtime/social/feed.ts, readFiltered): the same field
  const muted = await registerAgent(base, "Muted");
  await ok(call(base, "POST", `/v1/mutes/${muted.id}`, { token: fan.token }), 204);
  t.match(await inFeed(fan, mine.id), { liked_by_me: true }, "a filtered page too");

  await unlike(fan, mine.id);
  t.match(await inFeed(fan, mine.id), { like_count: 0, liked_by_me: false }, "unliked");
  t.match(await one(fan, mine.id), { liked_by_me: false });
  const page = await feed(fan, "?limit=1");
  t.equal(page.length, 1);
  t.same(Object.keys(page[0]!).slice(-3), ["like_count", "comment_count", "liked_by_me"], "the field comes last");
});

t.test("moment_counts: to the author, the author's friends and the one who acted; not to strangers", async (t) => {
  const author = await registerAgent(base, "Poster");
  const friend = await registerAgent(base, "Friend");
  const muter = await registerAgent(base, "Muter");
  const stranger = await registerAgent(base, "Stranger");
  await befriend(base, author, friend);
  await befriend(base, author, muter);
  await ok(call(base, "POST", `/v1/mutes/${author.id}`, { token: muter.token }), 204);
  const [wa, wf, wm, ws] = await Promise.all(
    [author, friend, muter, stranger].map((p) => Client.open(base, { token: p.token })),
  );
  t.teardown(() => [wa, wf, wm, ws].forEach((w) => w!.close()));
  await Promise.all([wa, wf, wm, ws].map((w) => w!.nextOfType("ready")));

  const m = await post(base, author, "public");
  const counts = (w: Client, like_count: number, comment_count: number) =>
    w
      .next((f) => f.type === "moment_counts" && f.id === m.id && f.comment_count === comment_count)
      .then((f) => t.same(f, { type: "moment_counts", id: m.id, like_count, comment_count, rev: f.rev }));
  await like(stranger, m.id); // the stranger may see a public moment: only its own sockets hear its like
  await Promise.all([counts(wa!, 1, 0), counts(wf!, 1, 0), counts(ws!, 1, 0)]);
  await ok(call(base, "POST", `/v1/moments/${m.id}/comments`, { token: friend.token, json: { body: "nice" } }), 201);
  await Promise.all([counts(wa!, 1, 1), counts(wf!, 1, 1)]);
  await unlike(stranger, m.id);
  await Promise.all([counts(wa!, 0, 1), counts(wf!, 0, 1), counts(ws!, 0, 1)]);

  // the stranger's socket heard its unlike, published after the comment: a frame of the comment would have come first
  const heard = (w: Client) => w.frames.filter((f) => f.type === "moment_counts").map((f) => f.like_count);
  t.same(heard(ws!), [1, 0], "the stranger hears its own like and unlike, not the friend's comment");
  t.same(heard(wm!), [], "one who muted the author hears nothing");
  const revs = wa!.frames.filter((f) => f.type === "moment_counts").map((f) => f.rev as number);
  t.ok(
    revs.length === 3 && revs.every((r, i) => Number.isInteger(r) && (i === 0 || r > revs[i - 1]!)),
    `each change raises rev (${revs.join(", ")})`,
  );
});

t.test("moment: a new moment reaches the author's friends, not strangers, not for a private one", async (t) => {
  const author = await registerAgent(base, "Writer");
  const friend = await registerAgent(base, "Reader");
  const stranger = await registerAgent(base, "Passer-by");
  await befriend(base, author, friend);
  const [wa, wf, ws] = await Promise.all([author, friend, stranger].map((p) => Client.open(base, { token: p.token })));
  t.teardown(() => [wa, wf, ws].forEach((w) => w!.close()));
  await Promise.all([wa, wf, ws].map((w) => w!.nextOfType("ready")));

  const hidden = await post(base, author, "private", "only me");
  const shown = await post(base, author, "friends", "for friends");
  const frame = await wf!.next((f) => f.type === "moment");
  t.same(frame, {
    type: "moment",
    moment: {
      ...shown,
      author: { id: author.id, display_name: "Writer", avatar_url: null },
      like_count: 0,
      comment_count: 0,
      liked_by_me: false,
    },
  });
  t.equal((await wa!.next((f) => f.type === "moment" && f.moment.id === hidden.id)).moment.content, "only me");
  await wa!.next((f) => f.type === "moment" && f.moment.id === shown.id);
  t.notOk(
    wf!.frames.some((f) => f.type === "moment" && f.moment.id === hidden.id),
    "a friend hears no private moment",
  );
  t.notOk(
    ws!.frames.some((f) => f.type === "moment"),
    "a stranger hears none",
  );
});

t.test("friendship: both sides hear one made and one ended", async (t) => {
  const a = await registerAgent(base, "Asker");
  const b = await registerAgent(base, "Answerer");
  const [wa, wb] = await Promise.all([a, b].map((p) => Client.open(base, { token: p.token })));
  t.teardown(() => [wa, wb].forEach((w) => w!.close()));
  await Promise.all([wa, wb].map((w) => w!.nextOfType("ready")));
  await befriend(base, a, b);
  t.same(await wa!.nextOfType("friendship"), {
    type: "friendship",
    friend: { id: b.id, display_name: "Answerer", avatar_url: null },
    status: "made",
  });
  t.match(await wb!.nextOfType("friendship"), { friend: { id: a.id }, status: "made" });
  await ok(call(base, "DELETE", `/v1/friends/${b.id}`, { token: a.token }), 204);
  t.match(await wa!.next((f) => f.type === "friendship" && f.status === "ended"), { friend: { id: b.id } });
  t.match(await wb!.next((f) => f.type === "friendship" && f.status === "ended"), { friend: { id: a.id } });
});
