// Reactions on messages (POST /v1/messages/{id}/reactions, DELETE .../reactions/{emoji}): members only, one per
// principal and emoji, exact counts under concurrency, at most 20 different emoji, none on a deleted message, and
// the change live on members' sockets and in history and redelivery.
import t from "tap";
import { call, registerAgent } from "./helpers/http.ts";
import { startTestNode } from "./helpers/node.ts";
import { Client, createGroup, pending, postToGroup, registerAgents, sendOk } from "./messaging-helpers.ts";

// limits scaled up: a test reacts 20 times in a row (the bucket of 10 a second is the rate-limit tests')
const node = await startTestNode(t, { env: { FLOCK_LIMITS_SCALE: "100" } });

const react = (token: string, id: string, emoji: unknown) =>
  call(node.url, "POST", `/v1/messages/${id}/reactions`, { token, json: { emoji } });
const unreact = (token: string, id: string, emoji: string) =>
  call(node.url, "DELETE", `/v1/messages/${id}/reactions/${encodeURIComponent(emoji)}`, { token });

t.test("members react and take reactions back; the same reaction twice counts once", async (t) => {
  const a = await registerAgent(node.url, "Ann");
  const b = await registerAgent(node.url, "Bob");
  const m = await sendOk(node.url, a, b.id, "ship it?");

  let r = await react(b.token, m.id, "👍");
  t.equal(r.status, 200);
  t.same(r.body.reactions, [{ emoji: "👍", count: 1, by: [b.id] }]);
  r = await react(b.token, m.id, "👍");
  t.same(r.body.reactions, [{ emoji: "👍", count: 1, by: [b.id] }], "again: no change");
  r = await react(a.token, m.id, "👍");
  r = await react(a.token, m.id, "🎉");
  t.same(
    r.body.reactions,
    [
      { emoji: "👍", count: 2, by: [b.id, a.id] },
      { emoji: "🎉", count: 1, by: [a.id] },
    ],
    "the most used first, reactors in order",
  );
  r = await react(a.token, m.id, ":ship_it:");
  t.equal(r.status, 200, "a short name");
  r = await react(b.token, m.id, "👍🏽");
  t.equal(r.status, 200, "a skin tone modifier");
  r = await react(b.token, m.id, "🇫🇷");
  t.equal(r.status, 200, "a flag");

  const [h] = (await call(node.url, "GET", `/v1/threads/${m.thread_id}/messages`, { token: b.token })).body.messages;
  t.equal(h.reactions.find((x: any) => x.emoji === "👍").count, 2, "history carries them");
  const [p] = await pending(node.url, b);
  t.equal(p.reactions.length, 5, "so does a delivery not acknowledged yet");

  r = await unreact(b.token, m.id, "👍");
  t.equal(r.status, 200);
  t.same(
    r.body.reactions.find((x: any) => x.emoji === "👍"),
    { emoji: "👍", count: 1, by: [a.id] },
  );
  r = await unreact(b.token, m.id, "👍");
  t.equal(r.status, 200, "taking back one not there: no change");
  for (const e of ["🎉", ":ship_it:"]) await unreact(a.token, m.id, e);
  await unreact(a.token, m.id, "👍");
  await unreact(b.token, m.id, "👍🏽");
  r = await unreact(b.token, m.id, "🇫🇷");
  t.notOk("reactions" in r.body, "the last one gone: no reactions field");
});

t.test("who may react, and what a reaction may be", async (t) => {
  const a = await registerAgent(node.url, "Ann");
  const b = await registerAgent(node.url, "Bob");
  const stranger = await registerAgent(node.url, "Eve");
  const m = await sendOk(node.url, a, b.id, "private");
  let r = await react(stranger.token, m.id, "👍");
  t.equal(r.status, 404, "outside the thread: 404");
  t.equal((await unreact(stranger.token, m.id, "👍")).status, 404);
  t.equal((await react(a.token, "msg_1", "👍")).status, 404, "no such message");
  for (const bad of ["", "ok", "👍 ", "a👍", ":Caps:", "👍".repeat(40), 7]) {
    r = await react(b.token, m.id, bad);
    t.equal(r.status, 400, `refused: ${JSON.stringify(bad)}`);
  }
  t.equal(r.body.field, "emoji");
  t.equal((await unreact(b.token, m.id, "ok")).status, 400, "a bad emoji in the path too");
  t.equal(
    (await call(node.url, "POST", `/v1/messages/${m.id}/reactions`, { json: { emoji: "👍" } })).status,
    401,
    "anonymous",
  );

  t.equal((await call(node.url, "DELETE", `/v1/messages/${m.id}`, { token: a.token })).status, 204);
  r = await react(b.token, m.id, "👍");
  t.equal(r.status, 409, "a deleted message takes none");
  t.equal(r.body.error, "conflict");
});

t.test("at most 20 different emoji; an emoji already there is still taken", async (t) => {
  const a = await registerAgent(node.url, "Ann");
  const b = await registerAgent(node.url, "Bob");
  const m = await sendOk(node.url, a, b.id, "react away");
  for (let i = 0; i < 20; i++) t.equal((await react(a.token, m.id, `:r${i}:`)).status, 200);
  const r = await react(a.token, m.id, ":one_more:");
  t.equal(r.status, 409);
  t.match(r.body.message, /20 different/);
  t.equal((await react(b.token, m.id, ":r3:")).status, 200, "joining an emoji already there is fine");
});

t.test("reactions made at once all count, and members' sockets hear each", async (t) => {
  const owner = await registerAgent(node.url, "Owner");
  const members = await registerAgents(node.url, 12, "m");
  const g = await createGroup(node.url, owner, members);
  const ws = await Client.open(node.url, { token: owner.token });
  t.teardown(() => ws.close());
  await ws.nextOfType("ready");
  const id = await postToGroup(node.url, owner, g, "vote");
  const answers = await Promise.all(members.map((m) => react(m.token, id, "✅")));
  t.same(
    answers.map((r) => r.status),
    members.map(() => 200),
  );
  const [h] = (
    await call(
      node.url,
      "GET",
      `/v1/threads/${(await call(node.url, "GET", `/v1/groups/${g}`, { token: owner.token })).body.group.thread_id}/messages`,
      { token: owner.token },
    )
  ).body.messages;
  t.equal(h.reactions[0].count, 12, "twelve at once, twelve counted");
  t.same([...h.reactions[0].by].sort(), members.map((m) => m.id).sort());
  await ws.next((f) => f.type === "message_update" && f.message.reactions?.[0]?.count === 12, 5000);
  t.pass("the owner's socket heard the count reach 12");
});
