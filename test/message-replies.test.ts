// Replies (`reply_to` on a direct or group send): the reply carries the quote of the message it answers, everywhere
// it is read; a message of another conversation cannot be answered; deleting the quoted message empties its quotes.
import t from "tap";
import { call, registerAgent } from "./helpers/http.ts";
import { startTestNode } from "./helpers/node.ts";
import { Client, createGroup, pending, postToGroup, sendOk } from "./messaging-helpers.ts";

const node = await startTestNode(t);

const send = (token: string, to: string, body: string, reply_to?: string) =>
  call(node.url, "POST", "/v1/messages", {
    token,
    json: { to, body, ...(reply_to === undefined ? {} : { reply_to }) },
  });

t.test("a reply carries the quote of the message it answers: in the answer, the delivery and history", async (t) => {
  const a = await registerAgent(node.url, "Ann");
  const b = await registerAgent(node.url, "Bob");
  const long = "é".repeat(250);
  const q = await sendOk(node.url, a, b.id, long);
  const r = await send(b.token, a.id, "agreed", q.id);
  t.equal(r.status, 201);
  t.same(
    r.body.reply_to,
    { id: q.id, from: { id: a.id, display_name: "Ann", avatar_url: null }, body: "é".repeat(200) },
    "the first 200 characters",
  );
  const [got] = await pending(node.url, a);
  t.same(got.reply_to, r.body.reply_to, "the recipient gets it");
  const [h] = (await call(node.url, "GET", `/v1/threads/${q.thread_id}/messages`, { token: a.token })).body.messages;
  t.same(h.reply_to, r.body.reply_to, "history has it");

  // the quote is what was answered: an edit of the quoted message later does not change it
  t.equal(
    (await call(node.url, "PATCH", `/v1/messages/${q.id}`, { token: a.token, json: { body: "changed" } })).status,
    200,
  );
  const [h2] = (await call(node.url, "GET", `/v1/threads/${q.thread_id}/messages`, { token: a.token })).body.messages;
  t.equal(h2.reply_to.body, "é".repeat(200));
});

t.test("only a message of the same conversation may be answered", async (t) => {
  const a = await registerAgent(node.url, "Ann");
  const b = await registerAgent(node.url, "Bob");
  const c = await registerAgent(node.url, "Cy");
  const elsewhere = await sendOk(node.url, c, b.id, "between Cy and Bob");
  for (const bad of [elsewhere.id, "msg_1", "nonsense"]) {
    const r = await send(b.token, a.id, "hi", bad);
    t.equal(r.status, 400, `refused: ${bad}`);
    t.equal(r.body.field, "reply_to");
  }
  t.equal((await call(node.url, "GET", "/v1/threads", { token: a.token })).body.threads.length, 0, "nothing was sent");
  const gone = await sendOk(node.url, a, b.id, "to be deleted");
  await call(node.url, "DELETE", `/v1/messages/${gone.id}`, { token: a.token });
  t.equal((await send(b.token, a.id, "hi", gone.id)).status, 400, "nor a deleted one");
});

t.test("group replies, and a deleted message's quotes keep who wrote it but not what", async (t) => {
  const a = await registerAgent(node.url, "Ann");
  const b = await registerAgent(node.url, "Bob");
  const g = await createGroup(node.url, a, [b]);
  const q = await postToGroup(node.url, a, g, "who is in?");
  const ws = await Client.open(node.url, { token: a.token });
  t.teardown(() => ws.close());
  await ws.nextOfType("ready");
  const r = await call(node.url, "POST", `/v1/groups/${g}/messages`, {
    token: b.token,
    json: { body: "me", reply_to: q },
  });
  t.equal(r.status, 201);
  t.equal(r.body.reply_to.id, q);
  const live = await ws.next((f) => f.type === "message" && f.message.id === r.body.id);
  t.equal(live.message.reply_to.body, "who is in?", "the live delivery carries the quote");
  const other = await createGroup(node.url, b, [a]);
  const otherQ = await postToGroup(node.url, b, other, "elsewhere");
  t.equal(
    (
      await call(node.url, "POST", `/v1/groups/${g}/messages`, {
        token: b.token,
        json: { body: "x", reply_to: otherQ },
      })
    ).status,
    400,
    "not another group's",
  );

  t.equal((await call(node.url, "DELETE", `/v1/messages/${q}`, { token: a.token })).status, 204);
  const thread = r.body.thread_id;
  const msgs = (await call(node.url, "GET", `/v1/threads/${thread}/messages`, { token: b.token })).body.messages;
  const reply = msgs.find((m: any) => m.id === r.body.id);
  t.same(
    reply.reply_to,
    { id: q, from: { id: a.id, display_name: "Ann", avatar_url: null }, body: "", deleted: true },
    "the quote of a deleted message",
  );
});
