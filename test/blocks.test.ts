// Blocks over HTTP and WebSocket (real Postgres and Redis): the routes, and every rule of a block both ways: direct
// sends, friend requests, group adds, comments, likes, a moment by id and the feed (moments cached before the block
// among them), group messages hidden from the blocker (live frames, long polls, history, message search), people
// search, the friendship ended, and unblocking, which restores contact but not the friendship.
import t from "tap";
import { call, type Registered, registerAgent } from "./helpers/http.ts";
import { signInWithWallet } from "./helpers/humans.ts";
import { startTestNode } from "./helpers/node.ts";
import { befriend, post } from "./helpers/social.ts";
import { Client, createGroup, pending, postToGroup, send } from "./messaging-helpers.ts";
import { until } from "./helpers/wait.ts";
import { MAX_BLOCKS } from "../schema/blocks.ts";

t.test("blocks", async (t) => {
  const node = await startTestNode(t);
  const base = node.url;
  const block = (who: Registered, other: string) => call(base, "POST", `/v1/blocks/${other}`, { token: who.token });
  const unblock = (who: Registered, other: string) => call(base, "DELETE", `/v1/blocks/${other}`, { token: who.token });
  const feedIds = async (who: Registered) => {
    const r = await call(base, "GET", "/v1/moments/feed?limit=100", { token: who.token });
    t.equal(r.status, 200);
    return (r.body.moments as { id: string }[]).map((m) => m.id);
  };
  const friendsOf = async (who: Registered) =>
    ((await call(base, "GET", "/v1/friends", { token: who.token })).body.friends as { id: string }[]).map((f) => f.id);

  t.test("the routes: 204 twice, 400 for oneself, 404 for no one, listed newest first, paged", async (t) => {
    const a = await registerAgent(base, "blocker");
    const [b, c] = [await registerAgent(base, "pest one"), await registerAgent(base, "pest two")];
    t.equal((await block(a, b.id)).status, 204);
    t.equal((await block(a, b.id)).status, 204, "blocking twice is fine");
    t.equal((await block(a, c.id)).status, 204);
    const self = await block(a, a.id);
    t.equal(self.status, 400);
    t.equal(self.body.error, "invalid_request");
    t.equal((await block(a, "99999999999")).status, 404, "an id that is no one's");
    t.equal((await block(a, "not-an-id")).status, 404);
    const all = await call(base, "GET", "/v1/blocks", { token: a.token });
    t.equal(all.status, 200);
    t.same(
      all.body.blocks.map((x: { principal: { id: string } }) => x.principal.id),
      [c.id, b.id],
    );
    t.same(Object.keys(all.body.blocks[0]), ["principal", "created_at"]);
    t.equal(all.body.has_more, false);
    const first = await call(base, "GET", "/v1/blocks?limit=1", { token: a.token });
    t.equal(first.body.has_more, true);
    const next = await call(base, "GET", `/v1/blocks?limit=1&before=${first.body.blocks[0].principal.id}`, {
      token: a.token,
    });
    t.same(
      next.body.blocks.map((x: { principal: { id: string } }) => x.principal.id),
      [b.id],
    );
    t.equal(next.body.has_more, false);
    t.equal((await call(base, "GET", "/v1/blocks?limit=0", { token: a.token })).status, 400);
    t.equal((await unblock(a, c.id)).status, 204);
    t.equal((await unblock(a, c.id)).status, 404, "no such block any more");
    t.equal((await call(base, "GET", "/v1/blocks", { token: b.token })).body.blocks.length, 0, "b is told nothing");
  });

  t.test(
    "direct sends: the blocked one's answers as a stranger's who takes no messages; the blocker's refused",
    async (t) => {
      const a = await registerAgent(base, "writer's target");
      const b = await registerAgent(base, "writer");
      t.equal((await send(base, b, a.id, "before")).status, 201, "they talked before");
      t.equal((await block(a, b.id)).status, 204);
      const refused = await send(base, b, a.id, "after");
      // a person who takes messages from friends only, and never talked with b
      const stranger = await signInWithWallet(base);
      const strangers = await send(base, b, stranger.id, "hello");
      t.equal(strangers.status, 404);
      t.equal(refused.status, strangers.status, "the same status as a send to a stranger");
      t.same(refused.body, strangers.body, "and the same body");
      const back = await send(base, a, b.id, "hi");
      t.equal(back.status, 409, "the blocker cannot write to the blocked either");
      t.equal(back.body.error, "conflict");
      t.same(
        (await pending(base, a)).map((m) => m.body),
        ["before"],
        "nothing after the block reached the blocker",
      );
    },
  );

  t.test("friend requests: the blocked one's is answered as any but never reaches the blocker", async (t) => {
    const a = await registerAgent(base, "asked");
    const b = await registerAgent(base, "asker");
    t.equal((await block(a, b.id)).status, 204);
    const req = await call(base, "POST", "/v1/friends/request", { token: b.token, json: { to: a.id } });
    t.equal(req.status, 201, "answered as a request to any agent");
    t.equal(req.body.request.status, "pending");
    const incoming = (await call(base, "GET", "/v1/friends/requests", { token: a.token })).body.incoming;
    t.same(incoming, [], "the blocker does not see it");
    const accept = await call(base, "POST", `/v1/friends/requests/${req.body.request.id}/accept`, { token: a.token });
    t.equal(accept.status, 404, "nor can accept it");
    const mine = await call(base, "POST", "/v1/friends/request", { token: a.token, json: { to: b.id } });
    t.equal(mine.status, 409, "the blocker's own request is refused");
    t.same(await friendsOf(a), []);
  });

  t.test("a friendship ends, and a pending request between them is dropped", async (t) => {
    const [a, b, c] = [
      await registerAgent(base, "fa"),
      await registerAgent(base, "fb"),
      await registerAgent(base, "fc"),
    ];
    await befriend(base, a, b);
    const req = await call(base, "POST", "/v1/friends/request", { token: c.token, json: { to: a.id } });
    t.equal(req.status, 201);
    t.same(await friendsOf(a), [b.id]);
    t.equal((await block(a, b.id)).status, 204);
    t.equal((await block(a, c.id)).status, 204);
    t.same(await friendsOf(a), [], "the friendship ended");
    t.same(await friendsOf(b), [], "on both sides");
    const outgoing = (await call(base, "GET", "/v1/friends/requests", { token: c.token })).body.outgoing;
    t.same(outgoing, [], "the pending request was dropped");
  });

  t.test("group adds: refused both ways, as an add refused by consent", async (t) => {
    const [a, b, c] = [
      await registerAgent(base, "ga"),
      await registerAgent(base, "gb"),
      await registerAgent(base, "gc"),
    ];
    t.equal((await block(a, b.id)).status, 204);
    const byBlocked = await call(base, "POST", "/v1/groups", { token: b.token, json: { name: "x", members: [a.id] } });
    t.equal(byBlocked.status, 404);
    t.same(byBlocked.body.missing, [a.id]);
    const nobody = await registerAgent(base, "gnobody");
    await call(base, "PATCH", "/v1/agents/me", { token: nobody.token, json: { accepts_group_adds_from: "nobody" } });
    const byConsent = await call(base, "POST", "/v1/groups", {
      token: b.token,
      json: { name: "x", members: [nobody.id] },
    });
    t.equal(byConsent.status, 404);
    t.same(Object.keys(byBlocked.body), Object.keys(byConsent.body), "the same shape as a refusal of consent");
    const g = await createGroup(base, c, [b]);
    const add = await call(base, "POST", `/v1/groups/${g}/members`, { token: c.token, json: { member: a.id } });
    t.equal(add.status, 200, "someone else may put both in one group");
    const byBlocker = await call(base, "POST", "/v1/groups", { token: a.token, json: { name: "y", members: [b.id] } });
    t.equal(byBlocker.status, 404, "the blocker cannot add the blocked");
  });

  t.test("moments: by id, comments, likes and the feed, both ways, cached ones included", async (t) => {
    const [a, b, c] = [
      await registerAgent(base, "ma"),
      await registerAgent(base, "mb"),
      await registerAgent(base, "mc"),
    ];
    await befriend(base, a, b);
    const ofA = await post(base, a, "public");
    const ofAFriends = await post(base, a, "friends");
    const ofB = await post(base, b, "public");
    const ofC = await post(base, c, "public");
    // the feeds are read (and cached) before the block
    const beforeA = await feedIds(a);
    const beforeB = await feedIds(b);
    for (const id of [ofB.id, ofC.id]) t.ok(beforeA.includes(id));
    for (const id of [ofA.id, ofAFriends.id]) t.ok(beforeB.includes(id));
    t.equal((await block(a, b.id)).status, 204);
    const afterA = await feedIds(a);
    const afterB = await feedIds(b);
    t.notOk(afterA.includes(ofB.id), "the blocker's feed has none of the blocked one's");
    t.ok(afterA.includes(ofC.id) && afterA.includes(ofA.id), "and the rest");
    t.notOk(
      afterB.includes(ofA.id) || afterB.includes(ofAFriends.id),
      "the blocked one's feed has none of the blocker's",
    );
    t.ok(afterB.includes(ofC.id));
    t.equal((await feedIds(a)).includes(ofB.id), false, "read again");
    const byId = await call(base, "GET", `/v1/moments/${ofA.id}`, { token: b.token });
    const none = await call(base, "GET", "/v1/moments/moment_1", { token: b.token });
    t.equal(byId.status, 404);
    t.same(byId.body, none.body, "as for a moment that never was");
    t.equal((await call(base, "GET", `/v1/moments/${ofB.id}`, { token: a.token })).status, 404, "the other way too");
    t.equal((await call(base, "GET", `/v1/moments/${ofA.id}/comments`, { token: b.token })).status, 404);
    const comment = await call(base, "POST", `/v1/moments/${ofA.id}/comments`, {
      token: b.token,
      json: { body: "hi" },
    });
    t.equal(comment.status, 404, "the blocked one cannot comment");
    t.equal((await call(base, "POST", `/v1/moments/${ofA.id}/like`, { token: b.token })).status, 404, "nor like");
    t.equal(
      (await call(base, "POST", `/v1/moments/${ofB.id}/comments`, { token: a.token, json: { body: "x" } })).status,
      404,
      "nor the blocker on the blocked one's",
    );
    t.equal((await call(base, "POST", `/v1/moments/${ofB.id}/like`, { token: a.token })).status, 404);
    t.equal((await call(base, "GET", `/v1/moments/${ofA.id}`, { token: c.token })).status, 200, "others still see it");
    // on a third one's moment, each one's comments are hidden from the other
    const byB = await call(base, "POST", `/v1/moments/${ofC.id}/comments`, {
      token: b.token,
      json: { body: "b here" },
    });
    t.equal(byB.status, 201, "the blocked one still comments elsewhere");
    const commentsOf = async (who: Registered) =>
      ((await call(base, "GET", `/v1/moments/${ofC.id}/comments`, { token: who.token })).body as { id: string }[]).map(
        (x) => x.id,
      );
    t.same(await commentsOf(a), [], "the blocker does not see it");
    t.same(await commentsOf(c), [byB.body.id], "the others do");
    const fresh = await post(base, b, "public", "after the block");
    t.notOk((await feedIds(a)).includes(fresh.id), "a moment made after the block is not shown either");
  });

  t.test("group messages: hidden from the blocker live, in long polls, history and search", async (t) => {
    const [a, b, c] = [
      await registerAgent(base, "ha"),
      await registerAgent(base, "hb"),
      await registerAgent(base, "hc"),
    ];
    const g = await createGroup(base, c, [a, b]);
    const thread = g.replace("group_", "thread_");
    const word = `w${Date.now().toString(36)}`;
    const ws = await Client.open(base, { token: a.token });
    t.teardown(() => ws.ws.close());
    await ws.nextOfType("ready");
    t.equal((await block(a, b.id)).status, 204);
    // the socket was live before the block: it follows the change; a new one starts with it
    const ws2 = await Client.open(base, { token: a.token });
    t.teardown(() => ws2.ws.close());
    await ws2.nextOfType("ready");
    const hidden = await postToGroup(base, b, g, `${word} from the blocked one`);
    const shown = await postToGroup(base, c, g, `${word} from another`);
    for (const socket of [ws, ws2]) {
      const f = await socket.nextOfType("message");
      t.equal(f.message.id, shown, "the live frame that comes is the other member's");
    }
    t.notOk(
      [...ws.frames, ...ws2.frames].some((f) => f.type === "message" && f.message.id === hidden),
      "no frame of the blocked one's",
    );
    const polled = await pending(base, a);
    t.same(
      polled.map((m) => m.id),
      [shown],
      "a long poll hands out only the other member's",
    );
    const seenByC = (await pending(base, c)).map((m) => m.id);
    t.ok(seenByC.includes(hidden), "the others get the blocked one's message");
    const history = await call(base, "GET", `/v1/threads/${thread}/messages`, { token: a.token });
    t.equal(history.status, 200);
    t.same(
      history.body.messages.map((m: { id: string }) => m.id),
      [shown],
      "history leaves it out for the blocker",
    );
    const listed = (await call(base, "GET", "/v1/threads", { token: a.token })).body.threads as {
      id: string;
      last_message: { id: string } | null;
    }[];
    t.equal(listed.find((x) => x.id === thread)?.last_message?.id, shown, "nor the thread list's last message");
    const historyC = await call(base, "GET", `/v1/threads/${thread}/messages`, { token: c.token });
    t.equal(historyC.body.messages.length, 2);
    const found = await call(base, "GET", `/v1/search/messages?q=${word}`, { token: a.token });
    t.equal(found.status, 200);
    t.same(
      found.body.messages.map((m: { id: string }) => m.id),
      [shown],
      "message search leaves it out",
    );
    const foundC = await call(base, "GET", `/v1/search/messages?q=${word}`, { token: c.token });
    t.equal(foundC.body.messages.length, 2);

    // a long poll waiting when the blocked one writes is not woken with it; the next message from another comes
    const waiting = call(base, "GET", "/v1/messages/pending?timeout=5", { token: a.token });
    for (const m of polled) await call(base, "POST", `/v1/messages/${m.id}/ack`, { token: a.token });
    const hidden2 = await postToGroup(base, b, g, "again from the blocked one");
    const shown2 = await postToGroup(base, c, g, "again from another");
    const got = await waiting;
    const ids = (got.body.messages as { id: string }[]).map((m) => m.id);
    t.notOk(ids.includes(hidden2), "the waiting poll never hands out the blocked one's");
    t.ok(ids.length === 0 || ids.includes(shown2) || ids.includes(shown));
  });

  t.test("people search: the blocker does not find the blocked", async (t) => {
    const name = `seek${Date.now().toString(36)}`;
    const a = await registerAgent(base, "seeker");
    const b = await registerAgent(base, name);
    const find = async (who: Registered) =>
      (
        (await call(base, "GET", `/v1/search/people?q=${name}`, { token: who.token })).body.people as { id: string }[]
      ).map((p) => p.id);
    t.same(await find(a), [b.id]);
    t.equal((await block(a, b.id)).status, 204);
    t.same(await find(a), [], "no longer found by the blocker");
    const person = await signInWithWallet(base);
    await befriend(base, person, b);
    const seePerson = async () =>
      (
        (await call(base, "GET", `/v1/search/people?q=${person.id}`, { token: b.token })).body.people as {
          id: string;
        }[]
      ).map((p) => p.id);
    t.same(await seePerson(), [person.id], "a friend person is found");
    t.equal((await block(person, b.id)).status, 204);
    t.same(await seePerson(), [], "a person who blocked the searcher is found no more, as one never introduced");
  });

  t.test("unblocking restores contact, not the friendship", async (t) => {
    const [a, b] = [await registerAgent(base, "ua"), await registerAgent(base, "ub")];
    await befriend(base, a, b);
    const m = await post(base, a, "friends");
    t.equal((await block(a, b.id)).status, 204);
    t.equal((await send(base, b, a.id)).status, 404);
    t.equal((await unblock(a, b.id)).status, 204);
    t.equal((await send(base, b, a.id, "back")).status, 201, "the blocked one may write again");
    t.equal((await send(base, a, b.id, "hi")).status, 201, "and the blocker");
    t.same(await friendsOf(a), [], "the friendship is not back");
    t.equal(
      (await call(base, "GET", `/v1/moments/${m.id}`, { token: b.token })).status,
      404,
      "a friends' moment stays hidden",
    );
    const pub = await post(base, a, "public");
    t.ok((await feedIds(b)).includes(pub.id), "a public one is seen again");
    const req = await call(base, "POST", "/v1/friends/request", { token: b.token, json: { to: a.id } });
    t.equal(req.status, 201);
    const incoming = (await call(base, "GET", "/v1/friends/requests", { token: a.token })).body.incoming;
    t.same(
      incoming.map((r: { id: string }) => r.id),
      [req.body.request.id],
      "a new request reaches the one who unblocked",
    );
  });

  t.test("at most MAX_BLOCKS blocks: one more answers 409, unblocking makes room", async (t) => {
    const a = await registerAgent(base, "collector");
    const sql = node.svc.sql;
    // MAX_BLOCKS principals, blocked by statement (as the route would, MAX_BLOCKS times)
    await sql`insert into principals (id, kind, display_name)
              select (8000000000000000000 + g)::text, 'agent', 'filler' from generate_series(1, ${MAX_BLOCKS}) g`;
    await sql`insert into blocks (blocker, blocked)
              select ${a.id}, (8000000000000000000 + g)::text from generate_series(1, ${MAX_BLOCKS}) g`;
    const b = await registerAgent(base, "one too many");
    const r = await block(a, b.id);
    t.equal(r.status, 409);
    t.equal(r.body.error, "conflict");
    t.match(r.body.message, /10000 blocks/);
    t.equal((await block(a, "8000000000000000001")).status, 204, "blocking one held already is still fine");
    t.equal((await unblock(a, "8000000000000000001")).status, 204);
    t.equal((await block(a, b.id)).status, 204, "one unblocked makes room");
  });

  t.test("across nodes: a block made on one node refuses the next send on another at once", async (t) => {
    const other = await startTestNode(t, { schema: node.schema, prefix: node.prefix });
    const [a, b] = [await registerAgent(base, "na"), await registerAgent(base, "nb")];
    // b's relations are read (and cached, empty) on the other node by a first send
    t.equal((await send(other.url, b, a.id, "first")).status, 201);
    t.equal((await block(a, b.id)).status, 204);
    let last = 0;
    await until(
      async () => {
        last = (await send(other.url, b, a.id, "again")).status;
        return last === 404;
      },
      { ms: 5000, every: 150, what: "the other node to hear of the block" },
    );
    t.equal(last, 404, "refused there well before the cache's 30 s would lapse");

    // a socket of the blocker on the other node, live before the block, follows it too
    const c = await registerAgent(base, "nc");
    const g = await createGroup(base, c, [a]);
    const ws = await Client.open(other.url, { token: a.token });
    t.teardown(() => ws.ws.close());
    await ws.nextOfType("ready");
    const d = await registerAgent(base, "nd");
    await call(base, "POST", `/v1/groups/${g}/members`, { token: c.token, json: { member: d.id } });
    t.equal((await block(a, d.id)).status, 204);
    await until(() => other.svc.relations.cached(a.id)?.blocking.has(d.id) === true, {
      ms: 5000,
      what: "the other node to read the blocker's blocks again",
    });
    const hidden = await postToGroup(base, d, g, "from the one blocked on another node");
    const shown = await postToGroup(base, c, g, "from another, seen on another node");
    // across nodes on a loaded machine (the suite runs files side by side): a generous bound, never a speed target
    const inGroup = await ws.next((f) => f.type === "message" && [hidden, shown].includes(f.message.id), 15_000);
    t.equal(inGroup.message.id, shown, "the group's live frame that comes is the other member's");
    t.notOk(ws.frames.some((f) => f.type === "message" && f.message.id === hidden));
  });

  t.test("the 31st block or unblock within a minute answers 429", async (t) => {
    const a = await registerAgent(base, "busy blocker");
    const b = await registerAgent(base, "busy target");
    for (let i = 0; i < 30; i++) t.equal((await block(a, b.id)).status, 204);
    const r = await block(a, b.id);
    t.equal(r.status, 429);
    t.equal(r.body.error, "rate_limited");
  });
});
