// Edit and delete (PATCH and DELETE /v1/messages/{id}): only the sender, edits within 48 hours, a tombstone in
// history, the files a deleted message carried no longer shared through it, the change live on members' sockets,
// and a message not yet acknowledged delivered again as it is now.
import t from "tap";
import { call, registerAgent } from "./helpers/http.ts";
import { startTestNode } from "./helpers/node.ts";
import { Client, createGroup, pending, postToGroup, sendOk } from "./messaging-helpers.ts";

const HOUR = 3_600_000;
let clock = Date.now();
const node = await startTestNode(t, { now: () => clock });

const edit = (token: string, id: string, body: unknown) =>
  call(node.url, "PATCH", `/v1/messages/${id}`, { token, json: { body } });
const remove = (token: string, id: string) => call(node.url, "DELETE", `/v1/messages/${id}`, { token });
const history = async (token: string, thread: string) =>
  (await call(node.url, "GET", `/v1/threads/${thread}/messages`, { token })).body.messages as any[];
const upload = async (token: string, text: string) => {
  const r = await call(node.url, "POST", "/v1/files/upload?name=note.txt", {
    token,
    body: text,
    headers: { "content-type": "text/plain" },
  });
  if (r.status !== 201) throw new Error(`upload: ${r.status} ${r.text}`);
  return r.body.id as string;
};

t.test(
  "the sender edits a message: the answer, history and a delivery not yet acknowledged carry the new body",
  async (t) => {
    const a = await registerAgent(node.url, "Ann");
    const b = await registerAgent(node.url, "Bob");
    const m = await sendOk(node.url, a, b.id, "helo");
    const first = await pending(node.url, b);
    t.equal(first[0].body, "helo", "delivered once, not acknowledged");

    clock += 60_000;
    const r = await edit(a.token, m.id, "hello");
    t.equal(r.status, 200);
    t.match(r.body, {
      id: m.id,
      thread_id: m.thread_id,
      body: "hello",
      from: { id: a.id },
      to: b.id,
      created_at: m.created_at,
    });
    t.equal(r.body.edited_at, new Date(clock).toISOString(), "edited_at is when it was changed");
    t.notOk("deleted_at" in r.body);

    const [h] = await history(b.token, m.thread_id);
    t.equal(h.body, "hello", "history has the new body");
    t.equal(h.edited_at, r.body.edited_at);
    const again = await pending(node.url, b);
    t.equal(again.length, 1);
    t.equal(again[0].body, "hello", "the redelivery carries the new body");
    t.equal(again[0].edited_at, r.body.edited_at);
    t.equal(again[0].delivery_count, 2);
    const list = (await call(node.url, "GET", "/v1/threads", { token: b.token })).body.threads.find(
      (x: any) => x.id === m.thread_id,
    );
    t.equal(list.last_message.body, "hello", "and the thread list's last message");
  },
);

t.test("only the sender edits or deletes; a stranger learns nothing; bad input is refused", async (t) => {
  const a = await registerAgent(node.url, "Ann");
  const b = await registerAgent(node.url, "Bob");
  const stranger = await registerAgent(node.url, "Eve");
  const m = await sendOk(node.url, a, b.id, "mine");

  let r = await edit(b.token, m.id, "theirs now");
  t.equal(r.status, 403, "the recipient may not edit it");
  t.equal(r.body.error, "forbidden");
  r = await remove(b.token, m.id);
  t.equal(r.status, 403, "nor delete it");
  r = await edit(stranger.token, m.id, "x");
  t.equal(r.status, 404, "someone outside the thread gets 404");
  t.equal(r.body.error, "not_found");
  t.equal((await remove(stranger.token, m.id)).status, 404);
  t.equal((await edit(a.token, "msg_1", "x")).status, 404, "no such message");
  t.equal((await edit(a.token, "nonsense", "x")).status, 404);
  r = await edit(a.token, m.id, "");
  t.equal(r.status, 400, "an empty body");
  t.equal(r.body.field, "body");
  t.equal((await edit(a.token, m.id, "x".repeat(8001))).status, 400, "a body past 8,000 characters");
  t.equal((await call(node.url, "PATCH", `/v1/messages/${m.id}`, { json: { body: "x" } })).status, 401, "anonymous");
  const [h] = await history(b.token, m.thread_id);
  t.equal(h.body, "mine", "nothing changed");
  t.notOk("edited_at" in h);
});

t.test("edits end 48 hours after sending; deleting has no limit", async (t) => {
  const a = await registerAgent(node.url, "Ann");
  const b = await registerAgent(node.url, "Bob");
  const m = await sendOk(node.url, a, b.id, "old news");
  clock += 47 * HOUR;
  t.equal((await edit(a.token, m.id, "still fresh")).status, 200, "at 47 hours");
  clock += 2 * HOUR;
  const r = await edit(a.token, m.id, "too late");
  t.equal(r.status, 403, "at 49 hours");
  t.match(r.body.message, /48 hours/);
  t.equal((await remove(a.token, m.id)).status, 204, "but it may still be deleted");
});

t.test("a delete leaves a tombstone, frees the files, and cannot be edited", async (t) => {
  const a = await registerAgent(node.url, "Ann");
  const b = await registerAgent(node.url, "Bob");
  const only = await upload(a.token, "only here");
  const twice = await upload(a.token, "sent twice");
  const m = await call(node.url, "POST", "/v1/messages", {
    token: a.token,
    json: { to: b.id, body: "files", attachments: [only, twice] },
  });
  t.equal(m.status, 201);
  await call(node.url, "POST", "/v1/messages", {
    token: a.token,
    json: { to: b.id, body: "again", attachments: [twice] },
  });
  t.equal((await call(node.url, "GET", `/v1/files/${only}`, { token: b.token })).status, 200, "shared with Bob");

  clock += 1000;
  t.equal((await remove(a.token, m.body.id)).status, 204);
  const h = (await history(b.token, m.body.thread_id)).find((x) => x.id === m.body.id);
  t.equal(h.body, "", "the tombstone has no body");
  t.notOk("attachments" in h, "nor files");
  t.equal(h.deleted_at, new Date(clock).toISOString());
  t.equal(
    (await call(node.url, "GET", `/v1/files/${only}`, { token: b.token })).status,
    404,
    "a file only it carried is no longer Bob's to read",
  );
  t.equal(
    (await call(node.url, "GET", `/v1/files/${twice}`, { token: b.token })).status,
    200,
    "one another message carries stays",
  );
  t.equal(
    (await call(node.url, "GET", `/v1/files/${only}`, { token: a.token })).status,
    200,
    "the owner keeps the file",
  );

  t.equal((await remove(a.token, m.body.id)).status, 204, "deleting again is fine");
  const r = await edit(a.token, m.body.id, "undo");
  t.equal(r.status, 409, "a deleted message cannot be edited");
  t.equal(r.body.error, "conflict");
  const polled = (await pending(node.url, b)).find((x) => x.id === m.body.id);
  t.equal(polled.body, "", "a delivery not yet acknowledged comes as the tombstone");
  t.ok(polled.deleted_at);
});

t.test(
  "members' sockets hear edits and deletes live; a reconnect gets an unacknowledged message as it is now",
  async (t) => {
    const a = await registerAgent(node.url, "Ann");
    const b = await registerAgent(node.url, "Bob");
    const c = await registerAgent(node.url, "Cy");
    const outsider = await registerAgent(node.url, "Out");
    const g = await createGroup(node.url, a, [b, c]);
    const [wa2, wb, wc, wo] = await Promise.all(
      [a, b, c, outsider].map((x) => Client.open(node.url, { token: x.token })),
    );
    t.teardown(() => [wa2, wb, wc, wo].forEach((w) => w?.close()));
    await Promise.all([wa2, wb, wc, wo].map((w) => w!.nextOfType("ready")));
    const id = await postToGroup(node.url, a, g, "draft");
    t.equal((await wb!.nextOfType("message")).message.body, "draft");

    t.equal((await edit(a.token, id, "final")).status, 200);
    for (const w of [wb, wc, wa2]) {
      const f = await w!.nextOfType("message_update");
      t.equal(f.message.id, id);
      t.equal(f.message.body, "final");
      t.ok(f.message.edited_at);
    }
    // Bob never acked: his next connection gets the message as it is now
    wb!.close();
    const wb2 = await Client.open(node.url, { token: b.token });
    t.teardown(() => wb2.close());
    const re = await wb2.next((f) => f.type === "message" && f.message.id === id);
    t.equal(re.message.body, "final", "redelivered with the new body");

    t.equal((await remove(a.token, id)).status, 204);
    const gone = await wc!.nextOfType("message_update");
    t.equal(gone.message.body, "");
    t.ok(gone.message.deleted_at);
    t.notOk(
      wo!.frames.some((f) => f.type === "message_update"),
      "someone outside the group heard nothing",
    );
  },
);
