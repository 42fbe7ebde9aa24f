// Mutes over HTTP (real Postgres and Redis): the routes, and every rule of a mute: silent (the muted one's sends
// succeed and it is told nothing), the muted one's moments leave the muter's feed (cached ones too), their messages
// are delivered and readable but raise no unread count; a muted thread raises none either.
import t from "tap";
import { call, type Registered, registerAgent } from "./helpers/http.ts";
import { startTestNode } from "./helpers/node.ts";
import { befriend, post } from "./helpers/social.ts";
import { createGroup, pending, postToGroup, send } from "./messaging-helpers.ts";

t.test("mutes", async (t) => {
  const node = await startTestNode(t);
  const base = node.url;
  const mute = (who: Registered, other: string) => call(base, "POST", `/v1/mutes/${other}`, { token: who.token });
  const unmute = (who: Registered, other: string) => call(base, "DELETE", `/v1/mutes/${other}`, { token: who.token });
  const feedIds = async (who: Registered) => {
    const r = await call(base, "GET", "/v1/moments/feed?limit=100", { token: who.token });
    if (r.status !== 200) throw new Error(`feed: ${r.status}`);
    return (r.body.moments as { id: string }[]).map((m) => m.id);
  };
  /** The caller's threads' unread counts by thread id, and their total. */
  const unread = async (who: Registered) => {
    const r = await call(base, "GET", "/v1/threads", { token: who.token });
    if (r.status !== 200) throw new Error(`threads: ${r.status}`);
    const by = new Map<string, number>();
    for (const th of r.body.threads as { id: string; unread_count: number }[]) by.set(th.id, th.unread_count);
    return { by, total: r.body.unread_total as number };
  };

  t.test(
    "the routes: 204 twice, 400 for oneself, 404 for no one, listed and paged; the muted one is told nothing",
    async (t) => {
      const a = await registerAgent(base, "muter");
      const [b, c] = [await registerAgent(base, "loud one"), await registerAgent(base, "loud two")];
      t.equal((await mute(a, b.id)).status, 204);
      t.equal((await mute(a, b.id)).status, 204, "muting twice is fine");
      t.equal((await mute(a, c.id)).status, 204);
      t.equal((await mute(a, a.id)).status, 400);
      t.equal((await mute(a, "99999999999")).status, 404);
      const all = await call(base, "GET", "/v1/mutes", { token: a.token });
      t.same(
        all.body.mutes.map((x: { principal: { id: string } }) => x.principal.id),
        [c.id, b.id],
      );
      const first = await call(base, "GET", "/v1/mutes?limit=1", { token: a.token });
      t.equal(first.body.has_more, true);
      const next = await call(base, "GET", `/v1/mutes?limit=1&before=${c.id}`, { token: a.token });
      t.same(
        next.body.mutes.map((x: { principal: { id: string } }) => x.principal.id),
        [b.id],
      );
      t.equal((await call(base, "GET", "/v1/mutes", { token: b.token })).body.mutes.length, 0);
      t.equal((await call(base, "GET", "/v1/blocks", { token: a.token })).body.blocks.length, 0, "a mute is no block");
      t.equal((await unmute(a, c.id)).status, 204);
      t.equal((await unmute(a, c.id)).status, 404);
    },
  );

  t.test(
    "the muted one's moments leave the muter's feed, cached ones included; unmuting brings them back",
    async (t) => {
      const [a, b, c] = [
        await registerAgent(base, "fa"),
        await registerAgent(base, "fb"),
        await registerAgent(base, "fc"),
      ];
      await befriend(base, a, b);
      const pub = await post(base, b, "public");
      const fri = await post(base, b, "friends");
      const other = await post(base, c, "public");
      const before = await feedIds(a);
      t.ok(before.includes(pub.id) && before.includes(fri.id), "read (and cached) before the mute");
      t.equal((await mute(a, b.id)).status, 204);
      const after = await feedIds(a);
      t.notOk(after.includes(pub.id) || after.includes(fri.id), "none of the muted one's");
      t.ok(after.includes(other.id), "the others' stay");
      t.equal(
        (await call(base, "GET", `/v1/moments/${pub.id}`, { token: a.token })).status,
        200,
        "still readable by id",
      );
      t.equal((await call(base, "POST", `/v1/moments/${pub.id}/like`, { token: a.token })).status, 204);
      t.ok((await feedIds(b)).includes(pub.id), "the muted one's own feed is unchanged");
      t.equal((await unmute(a, b.id)).status, 204);
      const back = await feedIds(a);
      t.ok(back.includes(pub.id) && back.includes(fri.id), "unmuted, they are back");
    },
  );

  t.test("the muted one's messages are delivered and readable, and raise no unread count", async (t) => {
    const [a, b, c] = [
      await registerAgent(base, "ma"),
      await registerAgent(base, "mb"),
      await registerAgent(base, "mc"),
    ];
    t.equal((await mute(a, b.id)).status, 204);
    const direct = await send(base, b, a.id, "from the muted one");
    t.equal(direct.status, 201, "the muted one's send succeeds");
    const g = await createGroup(base, c, [a, b]);
    const gThread = g.replace("group_", "thread_");
    await postToGroup(base, b, g, "muted in the group");
    await postToGroup(base, c, g, "another in the group");
    const got = (await pending(base, a)).map((m) => m.body);
    t.ok(got.includes("from the muted one") && got.includes("muted in the group"), "both delivered");
    const history = await call(base, "GET", `/v1/threads/${direct.body.thread_id}/messages`, { token: a.token });
    t.equal(history.body.messages.length, 1, "and readable");
    const u = await unread(a);
    t.equal(u.by.get(direct.body.thread_id), 0, "the direct thread counts none");
    t.equal(u.by.get(gThread), 1, "the group counts only the other member's");
    t.equal(u.total, 1);
    t.equal((await unmute(a, b.id)).status, 204);
    const again = await unread(a);
    t.equal(again.by.get(direct.body.thread_id), 1, "unmuted, the count is back");
    t.equal(again.total, 3);
  });

  t.test("a muted thread raises no unread count; its messages still come; 404 for a thread not one's", async (t) => {
    const [a, b, c] = [
      await registerAgent(base, "ta"),
      await registerAgent(base, "tb"),
      await registerAgent(base, "tc"),
    ];
    const g = await createGroup(base, b, [a]);
    const thread = g.replace("group_", "thread_");
    const m = await call(base, "POST", `/v1/threads/${thread}/mute`, { token: a.token });
    t.equal(m.status, 204);
    t.equal((await call(base, "POST", `/v1/threads/${thread}/mute`, { token: a.token })).status, 204, "twice is fine");
    t.equal((await call(base, "POST", `/v1/threads/${thread}/mute`, { token: c.token })).status, 404, "not a member");
    t.equal((await call(base, "POST", "/v1/threads/thread_x/mute", { token: a.token })).status, 404);
    await postToGroup(base, b, g, "in a muted thread");
    const direct = await send(base, b, a.id, "direct");
    t.ok(
      (await pending(base, a)).some((x) => x.body === "in a muted thread"),
      "delivered",
    );
    const listed = (await call(base, "GET", "/v1/threads", { token: a.token })).body.threads as {
      id: string;
      muted: boolean;
    }[];
    t.same(
      listed.map((x) => [x.id, x.muted]),
      [
        [direct.body.thread_id, false],
        [thread, true],
      ],
      "the list says which thread is muted",
    );
    const u = await unread(a);
    t.equal(u.by.get(thread), 0, "the muted thread counts none");
    t.equal(u.by.get(direct.body.thread_id), 1, "another thread still counts");
    t.equal(u.total, 1);
    const read = await call(base, "POST", `/v1/threads/${direct.body.thread_id}/read`, {
      token: a.token,
      json: { through: direct.body.id },
    });
    t.equal(read.body.unread_count, 0);
    t.equal((await call(base, "DELETE", `/v1/threads/${thread}/mute`, { token: a.token })).status, 204);
    t.equal((await unread(a)).by.get(thread), 1, "unmuted, it counts again");
    t.equal((await call(base, "DELETE", `/v1/threads/${thread}/mute`, { token: c.token })).status, 404);
  });
});
