// Friends over HTTP (redis engines, real Postgres): requests, mutual auto-accept, accept, decline and
// withdraw, list, unfriend, validation and the 30/min limit.
import t from "tap";
import { call, registerAgent } from "./helpers/http.ts";
import { startTestNode } from "./helpers/node.ts";
import { befriend } from "./helpers/social.ts";

const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

t.test("friends over HTTP", async (t) => {
  const node = await startTestNode(t);
  const base = node.url;
  const friendsOf = async (token: string) => (await call(base, "GET", "/v1/friends", { token })).body.friends;
  const requestsOf = async (token: string) => (await call(base, "GET", "/v1/friends/requests", { token })).body;

  t.test("request: 201 pending with the exact shape; a duplicate answers 200 with the same request", async (t) => {
    const a = await registerAgent(base, "alice");
    const b = await registerAgent(base, "bob");
    const r = await call(base, "POST", "/v1/friends/request", { token: a.token, json: { to: b.id } });
    t.equal(r.status, 201);
    t.same(Object.keys(r.body), ["request"]);
    t.same(Object.keys(r.body.request), ["id", "from", "to", "status", "created_at"]);
    t.match(r.body.request.id, /^freq_[0-9]+$/);
    t.equal(r.body.request.from, a.id);
    t.equal(r.body.request.to, b.id);
    t.equal(r.body.request.status, "pending");
    t.match(r.body.request.created_at, ISO);
    const again = await call(base, "POST", "/v1/friends/request", { token: a.token, json: { to: b.id } });
    t.equal(again.status, 200);
    t.same(again.body, r.body);
    t.same(
      await requestsOf(a.token),
      { incoming: [], outgoing: [r.body.request] },
      "a sent request names nobody but by id",
    );
    t.same(
      await requestsOf(b.token),
      {
        incoming: [{ ...r.body.request, sender: { id: a.id, display_name: a.display_name, avatar_url: null } }],
        outgoing: [],
      },
      "a received one says who asked",
    );
    t.same(await friendsOf(a.token), []);
  });

  t.test("accept: only the recipient; 200 with the friend; both lists; 409 afterwards", async (t) => {
    const a = await registerAgent(base, "ann");
    const b = await registerAgent(base, "ben");
    const r = await call(base, "POST", "/v1/friends/request", { token: a.token, json: { to: b.id } });
    const id = r.body.request.id;
    t.equal(
      (await call(base, "POST", `/v1/friends/requests/${id}/accept`, { token: a.token })).status,
      404,
      "not the sender",
    );
    const stranger = await registerAgent(base, "eve");
    t.equal((await call(base, "POST", `/v1/friends/requests/${id}/accept`, { token: stranger.token })).status, 404);
    const acc = await call(base, "POST", `/v1/friends/requests/${id}/accept`, { token: b.token });
    t.equal(acc.status, 200);
    t.same(acc.body, { friend: { id: a.id, display_name: "ann", avatar_url: null } });
    t.same(await friendsOf(a.token), [{ id: b.id, display_name: "ben", avatar_url: null }]);
    t.same(await friendsOf(b.token), [{ id: a.id, display_name: "ann", avatar_url: null }]);
    t.same(await requestsOf(b.token), { incoming: [], outgoing: [] });
    t.equal(
      (await call(base, "POST", `/v1/friends/requests/${id}/accept`, { token: b.token })).status,
      404,
      "not pending any more",
    );
    for (const [from, to] of [
      [a, b],
      [b, a],
    ] as const) {
      const dup = await call(base, "POST", "/v1/friends/request", { token: from.token, json: { to: to.id } });
      t.equal(dup.status, 409);
      t.equal(dup.body.error, "conflict");
    }
  });

  t.test("a request to someone who already asked makes both friends at once", async (t) => {
    const x = await registerAgent(base, "x");
    const y = await registerAgent(base, "y");
    const first = await call(base, "POST", "/v1/friends/request", { token: x.token, json: { to: y.id } });
    const second = await call(base, "POST", "/v1/friends/request", { token: y.token, json: { to: x.id } });
    t.equal(second.status, 201);
    t.equal(second.body.request.status, "accepted");
    t.equal(second.body.request.from, y.id);
    t.equal(second.body.request.to, x.id);
    t.not(second.body.request.id, first.body.request.id);
    t.same(await friendsOf(x.token), [{ id: y.id, display_name: "y", avatar_url: null }]);
    t.same(await friendsOf(y.token), [{ id: x.id, display_name: "x", avatar_url: null }]);
    t.same(await requestsOf(x.token), { incoming: [], outgoing: [] });
    t.equal(
      (await call(base, "POST", `/v1/friends/requests/${first.body.request.id}/accept`, { token: y.token })).status,
      404,
    );
  });

  t.test("simultaneous mutual requests end as one friendship", async (t) => {
    const p = await registerAgent(base, "p");
    const q = await registerAgent(base, "q");
    const [r1, r2] = await Promise.all([
      call(base, "POST", "/v1/friends/request", { token: p.token, json: { to: q.id } }),
      call(base, "POST", "/v1/friends/request", { token: q.token, json: { to: p.id } }),
    ]);
    t.same([r1.status, r2.status], [201, 201]);
    t.same([r1.body.request.status, r2.body.request.status].sort(), ["accepted", "pending"]);
    t.equal((await friendsOf(p.token)).length, 1);
    t.same(await requestsOf(q.token), { incoming: [], outgoing: [] });
  });

  t.test("decline by the recipient and withdraw by the sender: 204, then gone", async (t) => {
    const a = await registerAgent(base, "asker");
    const b = await registerAgent(base, "decider");
    const r = await call(base, "POST", "/v1/friends/request", { token: a.token, json: { to: b.id } });
    const d = await call(base, "POST", `/v1/friends/requests/${r.body.request.id}/decline`, { token: b.token });
    t.equal(d.status, 204);
    t.equal(d.text, "");
    t.same(await requestsOf(a.token), { incoming: [], outgoing: [] });
    t.equal(
      (await call(base, "POST", `/v1/friends/requests/${r.body.request.id}/decline`, { token: b.token })).status,
      404,
    );
    t.equal(
      (await call(base, "POST", `/v1/friends/requests/${r.body.request.id}/accept`, { token: b.token })).status,
      404,
    );
    t.same(await friendsOf(b.token), []);
    const again = await call(base, "POST", "/v1/friends/request", { token: a.token, json: { to: b.id } });
    t.equal(again.status, 201, "asking again after a decline is allowed");
    const w = await call(base, "POST", `/v1/friends/requests/${again.body.request.id}/decline`, { token: a.token });
    t.equal(w.status, 204, "the sender withdraws");
    t.same(await requestsOf(b.token), { incoming: [], outgoing: [] });
    const other = await registerAgent(base, "nosy");
    const r3 = await call(base, "POST", "/v1/friends/request", { token: a.token, json: { to: b.id } });
    t.equal(
      (await call(base, "POST", `/v1/friends/requests/${r3.body.request.id}/decline`, { token: other.token })).status,
      404,
    );
    for (const bad of ["freq_1", "freq_x", "123"]) {
      t.equal((await call(base, "POST", `/v1/friends/requests/${bad}/decline`, { token: b.token })).status, 404, bad);
      t.equal((await call(base, "POST", `/v1/friends/requests/${bad}/accept`, { token: b.token })).status, 404, bad);
    }
  });

  t.test("validation: self 400, malformed 400, unknown agent 404", async (t) => {
    const a = await registerAgent(base, "solo");
    const self = await call(base, "POST", "/v1/friends/request", { token: a.token, json: { to: a.id } });
    t.equal(self.status, 400);
    t.equal(self.body.field, "to");
    for (const json of [{}, { to: "" }, { to: "bob" }, { to: 42 }, { to: "moment_1" }]) {
      const r = await call(base, "POST", "/v1/friends/request", { token: a.token, json });
      t.equal(r.status, 400, JSON.stringify(json));
      t.equal(r.body.field, "to");
    }
    const r = await call(base, "POST", "/v1/friends/request", { token: a.token, json: { to: "999999999" } });
    t.equal(r.status, 404, "an agent id that is no one's");
    t.equal(r.body.error, "not_found");
    const person = await call(base, "POST", "/v1/friends/request", { token: a.token, json: { to: "P999999999" } });
    t.equal(person.status, 202, "a person's id answers alike whoever it is (test/privacy.test.ts)");
  });

  t.test("unfriend: 204 for both sides' view; 404 when not friends", async (t) => {
    const a = await registerAgent(base, "u1");
    const b = await registerAgent(base, "u2");
    await befriend(base, a, b);
    const r = await call(base, "DELETE", `/v1/friends/${b.id}`, { token: a.token });
    t.equal(r.status, 204);
    t.equal(r.text, "");
    t.same(await friendsOf(a.token), []);
    t.same(await friendsOf(b.token), []);
    t.equal((await call(base, "DELETE", `/v1/friends/${a.id}`, { token: b.token })).status, 404);
    t.equal((await call(base, "DELETE", `/v1/friends/${a.id}`, { token: a.token })).status, 404, "self");
    t.equal((await call(base, "DELETE", "/v1/friends/nobody", { token: a.token })).status, 404);
    await befriend(base, b, a);
    t.equal((await friendsOf(a.token)).length, 1, "befriending again works");
  });

  t.test("31st friend request within a minute answers 429", async (t) => {
    const a = await registerAgent(base, "spammer");
    const b = await registerAgent(base, "target");
    for (let i = 0; i < 30; i++) {
      const r = await call(base, "POST", "/v1/friends/request", { token: a.token, json: { to: b.id } });
      t.equal(r.status, i === 0 ? 201 : 200);
    }
    const r = await call(base, "POST", "/v1/friends/request", { token: a.token, json: { to: b.id } });
    t.equal(r.status, 429);
    t.equal(r.body.error, "rate_limited");
    t.ok(Number(r.headers.get("retry-after")) >= 1);
  });
});
