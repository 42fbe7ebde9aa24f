// Issue 50, lows 3 and 5: an idempotent replay of a send whose message has since been deleted answers the message
// as deleted (its id, no body, no files, no quote), not what was sent; and a `reply_to` naming a message the sender
// cannot see answers the same whatever that message is (one of the group's, of another group, a direct one, none).
import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import t from "tap";
import { call, type Registered, registerAgent } from "./helpers/http.ts";
import { startTestNode } from "./helpers/node.ts";

t.test("replays and replies", async (t) => {
  const dir = mkdtempSync(join(tmpdir(), "flock-replay-"));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const node = await startTestNode(t, { env: { FILES_DIR: dir } });
  const base = node.url;
  const [a, b, outsider] = (await Promise.all(["A", "B", "Out"].map((n) => registerAgent(base, n)))) as Registered[];

  t.test("a replay after a delete answers the message as deleted (low 3)", async (t) => {
    const up = await call(base, "POST", "/v1/files/upload?name=x.bin", {
      token: a!.token,
      body: randomBytes(256) as unknown as string,
      headers: { "content-type": "application/octet-stream" },
    });
    t.equal(up.status, 201, up.text);
    const first = await call(base, "POST", "/v1/messages", { token: b!.token, json: { to: a!.id, body: "quoted" } });
    const json = { to: b!.id, body: "take this back", attachments: [up.body.id], reply_to: first.body.id };
    const headers = { "idempotency-key": "to-delete-1" };
    const sent = await call(base, "POST", "/v1/messages", { token: a!.token, json, headers });
    t.equal(sent.status, 201, sent.text);
    t.equal((await call(base, "DELETE", `/v1/messages/${sent.body.id}`, { token: a!.token })).status, 204);

    const again = await call(base, "POST", "/v1/messages", { token: a!.token, json, headers });
    t.equal(again.status, 201, again.text);
    t.equal(again.headers.get("idempotency-replayed"), "true");
    t.equal(again.body.id, sent.body.id, "the same message");
    t.equal(again.body.body, "", "no body");
    t.ok(again.body.deleted_at, "marked deleted");
    t.notOk("attachments" in again.body, "no files");
    t.notOk("reply_to" in again.body, "no quote");
    t.notMatch(again.text, /take this back/);

    // a group send too
    const g = await call(base, "POST", "/v1/groups", { token: a!.token, json: { name: "g", members: [b!.id] } });
    const gh = { "idempotency-key": "to-delete-2" };
    const gs = await call(base, "POST", `/v1/groups/${g.body.group.id}/messages`, {
      token: a!.token,
      json: { body: "group secret" },
      headers: gh,
    });
    t.equal(gs.status, 201, gs.text);
    t.equal((await call(base, "DELETE", `/v1/messages/${gs.body.id}`, { token: a!.token })).status, 204);
    const gr = await call(base, "POST", `/v1/groups/${g.body.group.id}/messages`, {
      token: a!.token,
      json: { body: "group secret" },
      headers: gh,
    });
    t.equal(gr.status, 201);
    t.equal(gr.body.id, gs.body.id);
    t.equal(gr.body.body, "", "no body");
    t.notMatch(gr.text, /group secret/);
  });

  t.test("reply_to from a non-member answers alike whatever it names (low 5)", async (t) => {
    const g = await call(base, "POST", "/v1/groups", { token: a!.token, json: { name: "g", members: [b!.id] } });
    const other = await call(base, "POST", "/v1/groups", { token: a!.token, json: { name: "h", members: [b!.id] } });
    const inGroup = await call(base, "POST", `/v1/groups/${g.body.group.id}/messages`, {
      token: a!.token,
      json: { body: "in g" },
    });
    const inOther = await call(base, "POST", `/v1/groups/${other.body.group.id}/messages`, {
      token: a!.token,
      json: { body: "in h" },
    });
    const dm = await call(base, "POST", "/v1/messages", { token: a!.token, json: { to: b!.id, body: "direct" } });
    const own = await call(base, "POST", "/v1/messages", { token: outsider!.token, json: { to: a!.id, body: "mine" } });
    const names = {
      "the group's own message": inGroup.body.id,
      "another group's message": inOther.body.id,
      "a direct message between others": dm.body.id,
      "the outsider's own direct message": own.body.id,
      "no message": "msg_123456789",
      "not an id": "nonsense",
    };
    const answers: Record<string, { status: number; body: unknown }> = {};
    for (const [what, id] of Object.entries(names)) {
      const r = await call(base, "POST", `/v1/groups/${g.body.group.id}/messages`, {
        token: outsider!.token,
        json: { body: "hi", reply_to: id },
      });
      answers[what] = { status: r.status, body: r.body };
    }
    const plain = await call(base, "POST", `/v1/groups/${g.body.group.id}/messages`, {
      token: outsider!.token,
      json: { body: "hi" },
    });
    for (const [what, got] of Object.entries(answers)) {
      t.same(got, { status: plain.status, body: plain.body }, `${what}: as a send to the group with no reply_to`);
    }
    t.equal(plain.status, 404);
  });
});
