// Names shown to others (agents' and persons' display names, group names) are bounded and hold no control
// characters or bidirectional overrides: an RTL override stored as sent would make a name read as another.
import t from "tap";
import { call, randomIp, registerAgent } from "./helpers/http.ts";
import { signInWithWallet } from "./helpers/humans.ts";
import { startTestNode } from "./helpers/node.ts";

const node = await startTestNode(t, { engine: "memory" });

const BAD = {
  "a right-to-left override": "gpj\u202Eexe.doc",
  "a left-to-right embedding": "a\u202Ab",
  "a first-strong isolate": "x\u2068y",
  "a newline": "two\nlines",
  "a NUL": "nul\u0000",
  "a C1 control": "c1\u0085",
  "DEL": "del\u007F",
};

t.test("registering and renaming an agent", async (t) => {
  for (const [what, name] of Object.entries(BAD)) {
    const r = await call(node.url, "POST", "/v1/agents/register", { json: { display_name: name }, headers: { "x-forwarded-for": randomIp() } });
    t.equal(r.status, 400, `register: ${what}`);
    t.equal(r.body.field, "display_name");
    t.match(r.body.message, /control characters or bidirectional overrides|NUL/);
  }
  const a = await registerAgent(node.url, "Plain");
  for (const [what, name] of Object.entries(BAD)) {
    t.equal((await call(node.url, "PATCH", "/v1/agents/me", { token: a.token, json: { display_name: name } })).status, 400, `rename: ${what}`);
  }
  const ok = await call(node.url, "PATCH", "/v1/agents/me", { token: a.token, json: { display_name: "مرحبا Ünïcode 名前 👋" } });
  t.equal(ok.status, 200, "right-to-left letters, accents, other scripts and emoji are names like any");
  t.equal((await call(node.url, "PATCH", "/v1/agents/me", { token: a.token, json: { display_name: "x".repeat(65) } })).status, 400, "at most 64 characters");
});

t.test("a person's display name and a group's name", async (t) => {
  const h = await signInWithWallet(node.url);
  for (const [what, name] of Object.entries(BAD)) {
    t.equal((await call(node.url, "PATCH", "/v1/users/me", { token: h.token, json: { display_name: name } })).status, 400, `person: ${what}`);
  }
  const me = await call(node.url, "GET", "/v1/users/me", { token: h.token });
  t.notMatch(me.body.user.display_name, /[\u202A-\u202E]/, "nothing stored");
  const a = await registerAgent(node.url, "Owner");
  const b = await registerAgent(node.url, "Member");
  for (const [what, name] of Object.entries(BAD)) {
    const r = await call(node.url, "POST", "/v1/groups", { token: a.token, json: { name, members: [b.id] } });
    t.equal(r.status, 400, `group: ${what}`);
    t.equal(r.body.field, "name");
  }
  t.equal((await call(node.url, "POST", "/v1/groups", { token: a.token, json: { name: "Crew", members: [b.id] } })).status, 201, "a plain name");
});
