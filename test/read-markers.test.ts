// Read markers (POST /v1/threads/{id}/read), unread counts in the thread list, and read receipts on the WebSocket:
// who may mark what, that counts rise and clear, that a marker never moves back, and who hears a `read` event.
import t from "tap";
import { call, registerAgent } from "./helpers/http.ts";
import { signInWithWallet } from "./helpers/humans.ts";
import { startTestNode } from "./helpers/node.ts";
import { befriend, Client, createGroup, postToGroup, sendOk } from "./messaging-helpers.ts";

const node = await startTestNode(t);

const threads = async (token: string) => {
  const r = await call(node.url, "GET", "/v1/threads?limit=100", { token });
  if (r.status !== 200) throw new Error(`threads: ${r.status} ${r.text}`);
  return r.body as { threads: any[]; unread_total: number; has_more: boolean };
};
const markRead = (token: string, thread: string, through: string) =>
  call(node.url, "POST", `/v1/threads/${thread}/read`, { token, json: { through } });

t.test("unread counts rise with messages from others, and clear when the thread is marked read", async (t) => {
  const a = await registerAgent(node.url, "Ann");
  const b = await registerAgent(node.url, "Bob");
  const m1 = await sendOk(node.url, a, b.id, "one");
  const m2 = await sendOk(node.url, a, b.id, "two");
  const mine = await sendOk(node.url, b, a.id, "my own reply");
  const m3 = await sendOk(node.url, a, b.id, "three");

  let list = await threads(b.token);
  let th = list.threads.find((x) => x.id === m1.thread_id);
  t.equal(th.unread_count, 3, "three messages from Ann, Bob's own reply not counted");
  t.equal(th.read_through, null, "nothing marked yet");
  t.equal(list.unread_total, 3);
  t.equal(
    (await threads(a.token)).threads.find((x) => x.id === m1.thread_id).unread_count,
    1,
    "Ann has Bob's one reply unread",
  );

  let r = await markRead(b.token, m1.thread_id, m2.id);
  t.equal(r.status, 200);
  t.same(
    r.body,
    { thread_id: m1.thread_id, read_through: m2.id, unread_count: 1 },
    "through the second: one left above it",
  );
  list = await threads(b.token);
  th = list.threads.find((x) => x.id === m1.thread_id);
  t.equal(th.unread_count, 1);
  t.equal(th.read_through, m2.id);
  t.equal(list.unread_total, 1);

  r = await markRead(b.token, m1.thread_id, m1.id);
  t.equal(r.status, 200, "marking an older message is not an error");
  t.equal(r.body.read_through, m2.id, "and the marker does not move back");

  r = await markRead(b.token, m1.thread_id, mine.id);
  t.equal(r.body.read_through, mine.id, "one's own message may be the marker");
  r = await markRead(b.token, m1.thread_id, m3.id);
  t.same(r.body, { thread_id: m1.thread_id, read_through: m3.id, unread_count: 0 });
  list = await threads(b.token);
  t.equal(list.threads.find((x) => x.id === m1.thread_id).unread_count, 0, "cleared");
  t.equal(list.unread_total, 0);
  t.equal(
    (await threads(a.token)).threads.find((x) => x.id === m1.thread_id).peer_read_through,
    m3.id,
    "Ann sees how far Bob read",
  );
});

t.test("the total counts every thread, not only the page, and groups count too", async (t) => {
  const owner = await registerAgent(node.url, "Owner");
  const me = await registerAgent(node.url, "Me");
  const g = await createGroup(node.url, owner, [me]);
  await postToGroup(node.url, owner, g, "g1");
  await postToGroup(node.url, owner, g, "g2");
  for (let i = 0; i < 3; i++) await sendOk(node.url, await registerAgent(node.url, `w${i}`), me.id, "hi");
  const page = await call(node.url, "GET", "/v1/threads?limit=1", { token: me.token });
  t.equal(page.body.threads.length, 1);
  t.ok(page.body.has_more);
  t.equal(page.body.unread_total, 5, "2 in the group and one in each of 3 direct threads, over a page of 1");
  const gt = (await threads(me.token)).threads.find((x) => x.kind === "group");
  t.equal(gt.unread_count, 2);
  t.notOk("peer_read_through" in gt, "a group thread has no peer marker");
});

t.test("nobody marks a thread that is not theirs, nor through a message of another thread", async (t) => {
  const a = await registerAgent(node.url, "A");
  const b = await registerAgent(node.url, "B");
  const stranger = await registerAgent(node.url, "Stranger");
  const m = await sendOk(node.url, a, b.id, "private");
  const other = await sendOk(node.url, stranger, b.id, "elsewhere");

  let r = await markRead(stranger.token, m.thread_id, m.id);
  t.equal(r.status, 404, "a stranger cannot mark the pair's thread");
  t.equal(r.body.error, "not_found");
  r = await markRead(b.token, m.thread_id, other.id);
  t.equal(r.status, 404, "a message of another thread is not this one's");
  t.equal(r.body.error, "not_found");
  r = await markRead(b.token, m.thread_id, "msg_1");
  t.equal(r.status, 404, "no such message");
  r = await markRead(b.token, "thread_1", m.id);
  t.equal(r.status, 404, "no such thread");
  r = await markRead(b.token, "nonsense", m.id);
  t.equal(r.status, 404, "not a thread id");
  r = await markRead(b.token, m.thread_id, "nonsense");
  t.equal(r.status, 400, "not a message id");
  t.equal(r.body.field, "through");
  r = await call(node.url, "POST", `/v1/threads/${m.thread_id}/read`, { token: b.token, json: {} });
  t.equal(r.status, 400, "through is required");
  r = await call(node.url, "POST", `/v1/threads/${m.thread_id}/read`, { json: { through: m.id } });
  t.equal(r.status, 401, "anonymous");
  t.equal(
    (await threads(b.token)).threads.find((x) => x.id === m.thread_id).unread_count,
    1,
    "nothing was marked by the refused calls",
  );
});

t.test("a read receipt reaches the other members' sockets and the reader's own other sockets", async (t) => {
  const a = await registerAgent(node.url, "Ann");
  const b = await registerAgent(node.url, "Bob");
  const c = await registerAgent(node.url, "Cy");
  const g = await createGroup(node.url, a, [b, c]);
  const id = await postToGroup(node.url, a, g, "hello all");
  const group = (await call(node.url, "GET", `/v1/groups/${g}`, { token: a.token })).body;
  const thread = group.group?.thread_id ?? group.thread_id;
  const [wa, wb, wb2, wc] = await Promise.all([
    Client.open(node.url, { token: a.token }),
    Client.open(node.url, { token: b.token }),
    Client.open(node.url, { token: b.token }),
    Client.open(node.url, { token: c.token }),
  ]);
  t.teardown(() => [wa, wb, wb2, wc].forEach((w) => w.close()));
  await Promise.all([wa, wb, wb2, wc].map((w) => w.nextOfType("ready")));
  const r = await markRead(b.token, thread, id);
  t.equal(r.status, 200);
  const want = {
    type: "read",
    thread_id: thread,
    from: { id: b.id, display_name: "Bob", avatar_url: null },
    through: id,
  };
  t.same(await wa.nextOfType("read"), want, "the sender hears Bob read it");
  t.same(await wc.nextOfType("read"), want, "another member too");
  t.same(await wb2.nextOfType("read"), want, "and Bob's other connection");
  t.same(await wb.nextOfType("read"), want, "and the connection that marked it (over HTTP)");
  // marking again where the marker is moves nothing, and tells no one
  await markRead(b.token, thread, id);
  await markRead(c.token, thread, id);
  await wa.next((f) => f.type === "read" && f.from.id === c.id);
  t.equal(
    wa.frames.filter((f) => f.type === "read" && f.from.id === b.id).length,
    1,
    "a marker that did not move sends no second receipt",
  );
});

t.test("a person who turns read receipts off is heard by their own connections only", async (t) => {
  const a = await registerAgent(node.url, "Ann");
  const h = await signInWithWallet(node.url);
  await befriend(node.svc.sql, a.id, h.id);
  let me = await call(node.url, "GET", "/v1/users/me", { token: h.token });
  t.equal(me.body.user.read_receipts, true, "on by default");
  const p = await call(node.url, "PATCH", "/v1/users/me", { token: h.token, json: { read_receipts: false } });
  t.equal(p.status, 200);
  t.equal(p.body.user.read_receipts, false);
  me = await call(node.url, "GET", "/v1/users/me", { token: h.token });
  t.equal(me.body.user.read_receipts, false, "kept");
  t.equal(
    (await call(node.url, "PATCH", "/v1/users/me", { token: h.token, json: { read_receipts: "no" } })).status,
    400,
    "a boolean",
  );

  const m = await sendOk(node.url, a, h.id, "hi person");
  const [wa, wh] = await Promise.all([
    Client.open(node.url, { token: a.token }),
    Client.open(node.url, { token: h.token }),
  ]);
  t.teardown(() => [wa, wh].forEach((w) => w.close()));
  await Promise.all([wa.nextOfType("ready"), wh.nextOfType("ready")]);
  t.equal((await markRead(h.token, m.thread_id, m.id)).status, 200);
  t.equal((await wh.nextOfType("read")).through, m.id, "the person's own connection hears it");
  t.equal(
    (await threads(h.token)).threads.find((x) => x.id === m.thread_id).unread_count,
    0,
    "the own count clears as usual",
  );
  t.equal(
    (await threads(a.token)).threads.find((x) => x.id === m.thread_id).peer_read_through,
    null,
    "the thread list does not tell Ann",
  );
  // a later event Ann does hear shows the person's receipt did not come before it
  const reply = await sendOk(node.url, h, a.id, "reply");
  await markRead(a.token, m.thread_id, reply.id);
  await wa.next((f) => f.type === "read" && f.from.id === a.id);
  t.notOk(
    wa.frames.some((f) => f.type === "read" && f.from.id === h.id),
    "Ann's socket got no receipt from the person",
  );
  t.equal(
    (await threads(h.token)).threads.find((x) => x.id === m.thread_id).peer_read_through,
    reply.id,
    "Ann's receipts reach the person",
  );
});

t.test(
  "a group's Seen by: the other members' markers, the furthest first, without those who turned receipts off",
  async (t) => {
    const owner = await registerAgent(node.url, "Owner");
    const b = await registerAgent(node.url, "Bea");
    const c = await registerAgent(node.url, "Cal");
    const shy = await signInWithWallet(node.url);
    await befriend(node.svc.sql, owner.id, shy.id);
    const g = await createGroup(node.url, owner, [b, c, { id: shy.id, token: shy.token, display_name: "" }]);
    const thread = `thread_${g.slice("group_".length)}`;
    const reads = (token: string, id = thread) => call(node.url, "GET", `/v1/threads/${id}/reads`, { token });

    const m1 = await postToGroup(node.url, owner, g, "first");
    const m2 = await postToGroup(node.url, owner, g, "second");
    let r = await reads(owner.token);
    t.equal(r.status, 200);
    t.same(r.body, { reads: [] }, "nobody has read anything yet");

    t.equal((await markRead(b.token, thread, m2)).status, 200);
    t.equal((await markRead(c.token, thread, m1)).status, 200);
    await call(node.url, "PATCH", "/v1/users/me", { token: shy.token, json: { read_receipts: false } });
    t.equal((await markRead(shy.token, thread, m2)).status, 200);
    r = await reads(owner.token);
    t.same(
      r.body.reads.map((x: { member: { id: string }; read_through: string }) => [x.member.id, x.read_through]),
      [
        [b.id, m2],
        [c.id, m1],
      ],
      "Bea through the second, Cal through the first; the person who turned receipts off is not listed",
    );
    t.same(
      Object.keys(r.body.reads[0].member),
      ["id", "display_name", "avatar_url"],
      "each member as an author object",
    );
    const mine = await reads(b.token);
    t.notOk(
      mine.body.reads.some((x: { member: { id: string } }) => x.member.id === b.id),
      "the caller is not in its own list",
    );

    const stranger = await registerAgent(node.url, "Stranger");
    t.equal((await reads(stranger.token)).status, 404, "not a member: 404");
    t.equal((await reads(owner.token, "thread_123")).status, 404, "no such thread: 404");
    t.equal((await reads(owner.token, "nonsense")).status, 404, "not a thread id: 404");
  },
);

t.test("turning read receipts back on does not reveal the markers moved while they were off", async (t) => {
  const owner = await registerAgent(node.url, "Owner");
  const b = await registerAgent(node.url, "Bea");
  const shy = await signInWithWallet(node.url);
  await befriend(node.svc.sql, owner.id, shy.id);
  const g = await createGroup(node.url, owner, [b, { id: shy.id, token: shy.token, display_name: "" }]);
  const thread = `thread_${g.slice("group_".length)}`;
  const seen = async () =>
    Object.fromEntries(
      (await call(node.url, "GET", `/v1/threads/${thread}/reads`, { token: owner.token })).body.reads.map(
        (x: { member: { id: string }; read_through: string }) => [x.member.id, x.read_through],
      ),
    );
  const receipts = (on: boolean) =>
    call(node.url, "PATCH", "/v1/users/me", { token: shy.token, json: { read_receipts: on } });
  // and in a direct thread, the thread list's peer_read_through
  const dm = await sendOk(node.url, owner, shy.id, "one");
  const peerRead = async () =>
    (await threads(owner.token)).threads.find((x) => x.id === dm.thread_id).peer_read_through;

  const m1 = await postToGroup(node.url, owner, g, "first");
  t.equal((await markRead(shy.token, thread, m1)).status, 200);
  t.equal((await markRead(shy.token, dm.thread_id, dm.id)).status, 200);
  t.same(await seen(), { [shy.id]: m1 }, "receipts on: seen through the first");
  t.equal(await peerRead(), dm.id);

  await receipts(false);
  const m2 = await postToGroup(node.url, owner, g, "second");
  const dm2 = await sendOk(node.url, owner, shy.id, "two");
  t.equal((await markRead(shy.token, thread, m2)).status, 200);
  t.equal((await markRead(shy.token, dm.thread_id, dm2.id)).status, 200);
  t.same(await seen(), {}, "receipts off: not listed");
  t.equal(await peerRead(), null);

  await receipts(true);
  t.same(await seen(), { [shy.id]: m1 }, "back on: still through the first, not the second read while off");
  t.equal(
    await peerRead(),
    dm.id,
    "back on: the direct thread shows the marker from before, not the one moved while off",
  );

  const m3 = await postToGroup(node.url, owner, g, "third");
  t.equal((await markRead(shy.token, thread, m3)).status, 200);
  t.same(await seen(), { [shy.id]: m3 }, "a marker moved with receipts on is told again");
});
