import t from "tap";
import { call, registerAgent } from "./helpers/http.ts";
import { startTestNode } from "./helpers/node.ts";
import { sendOk } from "./messaging-helpers.ts";

t.test("threads and history (redis engines, real Postgres)", async (t) => {
  const node = await startTestNode(t);
  const base = node.url;
  const threads = (token: string, q = "") => call(base, "GET", `/v1/threads${q}`, { token });
  const history = (token: string, id: string, q = "") => call(base, "GET", `/v1/threads/${id}/messages${q}`, { token });

  t.test("the caller's threads, newest activity first, with the peer or the group", async (t) => {
    const a = await registerAgent(base, "Ann");
    const b = await registerAgent(base, "Ben");
    const c = await registerAgent(base, "Cid");
    const ab = await sendOk(base, a, b.id, "to Ben");
    const ac = await sendOk(base, a, c.id, "to Cid");
    const g = await call(base, "POST", "/v1/groups", { token: a.token, json: { name: "Crew", members: [b.id] } });
    t.equal(g.status, 201);
    const ba = await sendOk(base, b, a.id, "back to Ann");

    const r = await threads(a.token);
    t.equal(r.status, 200);
    t.equal(r.body.has_more, false);
    t.same(
      r.body.threads.map((x: any) => x.id),
      [ab.thread_id, g.body.group.thread_id, ac.thread_id],
    );
    const [first, group, last] = r.body.threads;
    t.same(Object.keys(first).sort(), [
      "id",
      "kind",
      "last_message",
      "muted",
      "peer",
      "peer_read_through",
      "read_through",
      "unread_count",
      "updated_at",
    ]);
    t.equal(first.kind, "direct");
    t.same(first.peer, { id: b.id, display_name: "Ben", avatar_url: null });
    t.same(first.last_message, ba);
    t.equal(first.updated_at, ba.created_at);
    t.same(group.group, { id: g.body.group.id, name: "Crew" });
    t.equal(group.kind, "group");
    t.equal(group.last_message, null);
    t.same(last.peer, { id: c.id, display_name: "Cid", avatar_url: null });

    const bs = await threads(b.token);
    t.same(
      bs.body.threads.map((x: any) => x.id),
      [ab.thread_id, g.body.group.thread_id],
    );
    t.same(bs.body.threads[0].peer, { id: a.id, display_name: "Ann", avatar_url: null });
    t.same((await threads(c.token)).body.threads.length, 1);

    const page1 = await threads(a.token, "?limit=2");
    t.equal(page1.body.threads.length, 2);
    t.equal(page1.body.has_more, true);
    const page2 = await threads(a.token, `?limit=2&before=${page1.body.threads[1].id}`);
    t.same(
      page2.body.threads.map((x: any) => x.id),
      [ac.thread_id],
    );
    t.equal(page2.body.has_more, false);
    t.equal((await threads(a.token, "?before=nope")).status, 400);
    t.equal((await threads(a.token, "?limit=0")).status, 400);
  });

  t.test("history: newest first, paged with before, members only", async (t) => {
    const a = await registerAgent(base, "a");
    const b = await registerAgent(base, "b");
    const c = await registerAgent(base, "c");
    const sent = [];
    for (let i = 0; i < 5; i++) sent.push(await sendOk(base, i % 2 ? b : a, i % 2 ? a.id : b.id, `m${i}`));
    const thread = sent[0].thread_id;
    const r = await history(a.token, thread, "?limit=3");
    t.equal(r.status, 200);
    t.same(
      r.body.messages.map((m: any) => m.body),
      ["m4", "m3", "m2"],
    );
    t.same(r.body.messages[0], sent[4], "the message shape");
    t.equal(r.body.has_more, true);
    const next = await history(b.token, thread, `?limit=3&before=${r.body.messages[2].id}`);
    t.same(
      next.body.messages.map((m: any) => m.body),
      ["m1", "m0"],
    );
    t.equal(next.body.has_more, false);
    t.equal((await history(c.token, thread)).status, 404, "not a member");
    t.equal((await history(c.token, thread)).body.error, "not_found");
    t.equal((await history(a.token, "thread_1")).status, 404, "no such thread");
    t.equal((await history(a.token, "nope")).status, 404);
    t.equal((await history(a.token, thread, "?before=nope")).status, 400);
  });

  t.test("a deleted sender's messages stay, shown from a deleted author", async (t) => {
    const a = await registerAgent(base, "gone soon");
    const b = await registerAgent(base, "stays");
    const m = await sendOk(base, a, b.id, "remember me");
    await node.svc.sql`delete from principals where id = ${a.id}`;
    const r = await history(b.token, m.thread_id);
    t.equal(r.status, 200);
    t.same(r.body.messages[0].from, { id: a.id, display_name: "[deleted]", avatar_url: null });
    t.equal(r.body.messages[0].body, "remember me");
    const list = await threads(b.token);
    t.same(list.body.threads[0].peer, { id: a.id, display_name: "[deleted]", avatar_url: null });
  });
});
