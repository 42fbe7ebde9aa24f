import t from "tap";
import { call, type Registered, registerAgent, type Res } from "./helpers/http.ts";
import { signInWithWallet } from "./helpers/humans.ts";
import { startTestNode } from "./helpers/node.ts";
import { befriend, unfriend } from "./helpers/social.ts";
import { POLICIES } from "../runtime/limits/policies.ts";
import { ack, pending } from "./messaging-helpers.ts";

type Four = [Registered, Registered, Registered, Registered];

for (const engine of ["redis", "memory"] as const) {
  t.test(`groups (${engine} engines, real Postgres)`, async (t) => {
    const node = await startTestNode(t, { engine });
    const base = node.url;
    const create = (token: string, json: unknown) => call(base, "POST", "/v1/groups", { token, json });
    const get = (token: string, id: string) => call(base, "GET", `/v1/groups/${id}`, { token });
    const post = (token: string, id: string, body: string) =>
      call(base, "POST", `/v1/groups/${id}/messages`, { token, json: { body } });
    const add = (token: string, id: string, members: string[]) =>
      call(base, "POST", `/v1/groups/${id}/members`, { token, json: { members } });
    const remove = (token: string, id: string, member: string) =>
      call(base, "DELETE", `/v1/groups/${id}/members/${member}`, { token });

    t.test("create answers 201 with the group; members read it, others get 404", async (t) => {
      const a = await registerAgent(base, "Owner");
      const b = await registerAgent(base, "Bea");
      const c = await registerAgent(base, "Cal");
      const r = await create(a.token, { name: "  Team  ", members: [b.id, a.id, b.id] });
      t.equal(r.status, 201);
      const g = r.body.group;
      t.same(Object.keys(g).sort(), ["created_at", "id", "members", "name", "owner", "thread_id"]);
      t.match(g.id, /^group_[0-9]+$/);
      t.equal(g.thread_id, g.id.replace("group_", "thread_"));
      t.equal(g.name, "Team");
      t.equal(g.owner, a.id);
      t.same(g.members, [
        { id: a.id, display_name: "Owner", avatar_url: null },
        { id: b.id, display_name: "Bea", avatar_url: null },
      ]);
      const read = await get(b.token, g.id);
      t.equal(read.status, 200);
      t.same(read.body.group, g);
      t.equal((await get(c.token, g.id)).status, 404, "a non-member");
      t.equal((await get(c.token, g.id)).body.error, "not_found");
      t.equal((await get(a.token, "group_1")).status, 404);
      t.equal((await get(a.token, "nope")).status, 404);
    });

    t.test("bad creates", async (t) => {
      const a = await registerAgent(base, "a");
      const blank = await create(a.token, { name: "  " });
      t.equal(blank.status, 400);
      t.equal(blank.body.field, "name");
      const unknown = await create(a.token, { name: "x", members: ["987654321"] });
      t.equal(unknown.status, 404);
      t.same(unknown.body.missing, ["987654321"]);
      const bad = await create(a.token, { name: "x", members: ["bob"] });
      t.equal(bad.status, 400);
      const alone = await create(a.token, { name: "just me" });
      t.equal(alone.status, 201, "members may be omitted");
      t.same(
        alone.body.group.members.map((m: any) => m.id),
        [a.id],
      );
    });

    t.test("a group message reaches every other member; non-members are refused", async (t) => {
      const [a, b, c, d] = (await Promise.all(["a", "b", "c", "d"].map((n) => registerAgent(base, n)))) as Four;
      const g = (await create(a.token, { name: "fan-out", members: [b.id, c.id] })).body.group;
      const r = await post(b.token, g.id, "hello all");
      t.equal(r.status, 201);
      t.same(Object.keys(r.body).sort(), ["body", "created_at", "from", "id", "thread_id", "to"]);
      t.equal(r.body.to, g.id);
      t.equal(r.body.thread_id, g.thread_id);
      t.same(r.body.from, { id: b.id, display_name: "b", avatar_url: null });
      for (const who of [a, c]) {
        const got = await pending(base, who);
        t.same(
          got.map((m) => [m.id, m.delivery_count]),
          [[r.body.id, 1]],
        );
        t.equal((await ack(base, who, r.body.id)).status, 204);
        t.equal((await ack(base, who, r.body.id)).status, 204, "acking again is still 204");
      }
      t.same(await pending(base, b), [], "not to the sender");
      t.same(await pending(base, d), [], "not to outsiders");
      // its sockets receive it from the group's topic, so acking it is accepted, and changes nothing
      t.equal((await ack(base, b, r.body.id)).status, 204, "the sender's ack of its own");
      t.same(await pending(base, b), [], "still nothing for the sender");
      t.equal((await ack(base, d, r.body.id)).status, 404, "an outsider cannot ack it");
      const outsider = await post(d.token, g.id, "let me in");
      t.equal(outsider.status, 404);
      t.equal(outsider.body.error, "not_found");
      t.equal((await post(a.token, "group_1", "x")).status, 404);
      t.equal((await post(a.token, g.id, "")).status, 400);
      // the group endpoint never writes into a direct thread
      const direct = await call(base, "POST", "/v1/messages", { token: a.token, json: { to: b.id, body: "dm" } });
      const asGroup = direct.body.thread_id.replace("thread_", "group_");
      t.equal((await post(a.token, asGroup, "sneaky")).status, 404);
      const history = await call(base, "GET", `/v1/threads/${g.thread_id}/messages`, { token: c.token });
      t.same(
        history.body.messages.map((m: any) => m.body),
        ["hello all"],
      );
      t.equal((await add(a.token, g.id, [d.id])).status, 200);
      t.equal((await ack(base, d, r.body.id)).status, 404, "nor a member who joined after it was sent");
    });

    t.test(
      "one request lists at most 1,000 members (a create or an add); nothing is created or added past it",
      async (t) => {
        const [a, b] = (await Promise.all(["a", "b"].map((n) => registerAgent(base, n)))) as [Registered, Registered];
        const many = Array.from({ length: 1001 }, (_, i) => String(900_000_000 + i));
        const tooMany = await create(a.token, { name: "crowd", members: many });
        t.equal(tooMany.status, 400);
        t.equal(tooMany.body.error, "invalid_request");
        t.match(tooMany.body.message, /members/, "the message names the field");
        t.match(tooMany.body.message, /1000/, "and the rule");
        const g = (await create(a.token, { name: "crowd", members: [b.id] })).body.group;
        const addMany = await add(a.token, g.id, many);
        t.equal(addMany.status, 400);
        t.match(addMany.body.message, /members/);
        t.same(
          (await get(a.token, g.id)).body.group.members.map((m: any) => m.id),
          [a.id, b.id],
          "nobody was added",
        );
      },
    );

    t.test("the owner adds and removes members; members may leave; others are refused", async (t) => {
      const [a, b, c, d] = (await Promise.all(["a", "b", "c", "d"].map((n) => registerAgent(base, n)))) as Four;
      const g = (await create(a.token, { name: "club", members: [b.id] })).body.group;
      t.equal((await add(b.token, g.id, [c.id])).status, 403, "a member who is not the owner");
      t.equal((await add(d.token, g.id, [c.id])).status, 404, "a non-member");
      t.equal((await add(a.token, g.id, ["987654321"])).status, 404, "an unknown principal");
      t.equal((await call(base, "POST", `/v1/groups/${g.id}/members`, { token: a.token, json: {} })).status, 400);
      const added = await add(a.token, g.id, [c.id, b.id]);
      t.equal(added.status, 200);
      const one = await call(base, "POST", `/v1/groups/${g.id}/members`, { token: a.token, json: { member: c.id } });
      t.equal(one.status, 200, "one member as {member}");
      t.same(
        added.body.group.members.map((m: any) => m.id),
        [a.id, b.id, c.id],
      );
      const m = await post(a.token, g.id, "welcome c");
      t.same(
        (await pending(base, c)).map((x) => x.id),
        [m.body.id],
        "a new member receives what is sent after joining",
      );

      t.equal((await remove(b.token, g.id, c.id)).status, 403, "only the owner removes others");
      t.equal((await remove(d.token, g.id, c.id)).status, 404);
      t.equal((await remove(a.token, g.id, d.id)).status, 404, "not a member");
      const removed = await remove(a.token, g.id, c.id);
      t.equal(removed.status, 204);
      t.equal(removed.text, "");
      t.equal((await get(c.token, g.id)).status, 404, "a removed member no longer sees the group");
      t.equal((await post(c.token, g.id, "still here?")).status, 404);

      t.equal((await remove(a.token, g.id, a.id)).status, 204, "the owner leaves");
      const after = await get(b.token, g.id);
      t.equal(after.body.group.owner, b.id, "ownership passes to the longest-standing member");
      t.same(
        after.body.group.members.map((x: any) => x.id),
        [b.id],
      );
      t.equal((await remove(b.token, g.id, b.id)).status, 204, "the last member leaves");
      t.equal((await get(b.token, g.id)).status, 404);
    });

    t.test("a person is added only by a friend; a refusal reads as for an id that does not exist", async (t) => {
      const a = await registerAgent(base, "owner");
      const b = await registerAgent(base, "bot");
      const h = await signInWithWallet(base); // a person the owner does not know
      const f = await signInWithWallet(base); // a person who made the owner a friend
      await befriend(base, a, f);
      const nobody = "P987654321";
      t.equal(
        (await call(base, "GET", `/v1/agents/${h.id}`, { token: a.token })).status,
        404,
        "a person has no public profile",
      );

      // What a refusal shows, with the id itself taken out: it must not tell a hidden person from no one.
      const shape = (r: Res<any>, id: string) => ({
        status: r.status,
        keys: Object.keys(r.body).sort(),
        error: r.body.error,
        message: String(r.body.message).split(id).join("<id>"),
        missing: (r.body.missing as string[]).map((x) => (x === id ? "<id>" : x)),
      });
      const hidden = await create(a.token, { name: "x", members: [b.id, h.id] });
      const unknown = await create(a.token, { name: "x", members: [b.id, nobody] });
      t.equal(hidden.status, 404);
      t.equal(hidden.body.error, "not_found");
      t.same(hidden.body.missing, [h.id], "only the person is refused; an agent may be added by anyone");
      t.same(shape(hidden, h.id), shape(unknown, nobody), "create: a person who is not a friend reads as no one");
      const byPerson = await create(f.token, { name: "x", members: [h.id] });
      t.same(shape(byPerson, h.id), shape(unknown, nobody), "a person adding a stranger is refused the same way");

      const g = (await create(a.token, { name: "club", members: [f.id, b.id] })).body.group;
      t.same(
        g.members.map((m: any) => m.id),
        [a.id, f.id, b.id],
        "a friend and an agent are added",
      );
      const hiddenAdd = await add(a.token, g.id, [h.id]);
      const unknownAdd = await add(a.token, g.id, [nobody]);
      t.equal(hiddenAdd.status, 404);
      t.same(shape(hiddenAdd, h.id), shape(unknownAdd, nobody), "member add: the same answer");
      t.same(shape(hiddenAdd, h.id), shape(unknown, nobody), "and the same as on create");
      t.same(
        (await get(a.token, g.id)).body.group.members.map((m: any) => m.id),
        [a.id, f.id, b.id],
        "nobody was added by the refused requests",
      );
      t.equal((await get(h.token, g.id)).status, 404, "the stranger is not in it");

      await befriend(base, h, a);
      const added = await add(a.token, g.id, [h.id]);
      t.equal(added.status, 200, "once friends, the person can be added");
      await unfriend(base, a, h);
      t.equal(
        (await add(a.token, g.id, [h.id, b.id])).status,
        200,
        "adding someone already in the group changes nothing",
      );
      t.equal((await create(a.token, { name: "y", members: [h.id] })).status, 404, "an ex-friend is refused again");
    });
  });
}

t.test("group creation and member adds share one limit per principal", async (t) => {
  const clock = Date.now();
  const node = await startTestNode(t, { engine: "memory", now: () => clock }); // time stands still: no refill
  const base = node.url;
  const a = await registerAgent(base, "a");
  const b = await registerAgent(base, "b");
  const limit = POLICIES.groups.limit;
  const g = await call(base, "POST", "/v1/groups", { token: a.token, json: { name: "g" } });
  t.equal(g.status, 201);
  t.equal(g.headers.get("ratelimit-policy"), `"groups";q=${limit};w=${POLICIES.groups.window}`);
  const statuses: number[] = [];
  for (let i = 1; i < limit; i++) {
    const path = i % 2 === 0 ? "/v1/groups" : `/v1/groups/${g.body.group.id}/members`;
    statuses.push(
      (
        await call(base, "POST", path, {
          token: a.token,
          json: i % 2 === 0 ? { name: `g${i}` } : { members: ["987654321"] },
        })
      ).status,
    );
  }
  t.ok(
    statuses.every((s) => s === 201 || s === 404),
    "within the limit (refused adds count too)",
  );
  const over = await call(base, "POST", "/v1/groups", { token: a.token, json: { name: "one more" } });
  t.equal(over.status, 429);
  t.equal(over.body.error, "rate_limited");
  const add = await call(base, "POST", `/v1/groups/${g.body.group.id}/members`, {
    token: a.token,
    json: { members: [b.id] },
  });
  t.equal(add.status, 429, "member adds share the bucket");
  t.equal(
    (await call(base, "POST", "/v1/groups", { token: b.token, json: { name: "b's" } })).status,
    201,
    "another principal is not affected",
  );
});
