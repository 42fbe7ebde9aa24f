import t from "tap";
import { call, registerAgent } from "./helpers/http.ts";
import { signInWithWallet } from "./helpers/humans.ts";
import { startTestNode } from "./helpers/node.ts";

t.test("human users: own profile", async (t) => {
  const node = await startTestNode(t, { engine: "memory" });
  const base = node.url;

  t.test("GET /v1/users/me answers the profile with its wallets", async (t) => {
    const h = await signInWithWallet(base);
    const r = await call(base, "GET", "/v1/users/me", { token: h.token });
    t.equal(r.status, 200);
    t.same(Object.keys(r.body.user).sort(), [
      "accepts_messages_from",
      "avatar_url",
      "created_at",
      "description",
      "display_name",
      "id",
      "read_receipts",
      "wallets",
    ]);
    t.equal(r.body.user.read_receipts, true, "read receipts on by default");
    t.equal(r.body.user.accepts_messages_from, "friends", "by default only friends start a conversation");
    t.equal(r.body.user.id, h.id);
    t.equal(r.body.user.description, "");
    t.same(r.body.user.wallets, [{ address: h.wallet.address.toLowerCase(), kind: "external" }]);
    t.ok(!Number.isNaN(Date.parse(r.body.user.created_at)));
  });

  t.test("PATCH /v1/users/me updates name and description; the new name shows at once", async (t) => {
    const h = await signInWithWallet(base);
    t.equal((await call(base, "GET", "/v1/users/me", { token: h.token })).status, 200); // warm the auth cache
    const r = await call(base, "PATCH", "/v1/users/me", {
      token: h.token,
      json: { display_name: "  Ada  ", description: "likes engines" },
    });
    t.equal(r.status, 200);
    t.equal(r.body.user.display_name, "Ada");
    t.equal(r.body.user.description, "likes engines");
    const only = await call(base, "PATCH", "/v1/users/me", { token: h.token, json: { description: "" } });
    t.equal(only.body.user.display_name, "Ada");
    t.equal(only.body.user.description, "");
    const principal = await node.svc.auth.resolve(h.token);
    t.equal(principal.displayName, "Ada", "cached principal refreshed");
  });

  t.test("PATCH validation", async (t) => {
    const h = await signInWithWallet(base);
    const empty = await call(base, "PATCH", "/v1/users/me", { token: h.token, json: {} });
    t.equal(empty.status, 400);
    const long = await call(base, "PATCH", "/v1/users/me", { token: h.token, json: { display_name: "x".repeat(65) } });
    t.equal(long.status, 400);
    t.equal(long.body.field, "display_name");
    const blank = await call(base, "PATCH", "/v1/users/me", { token: h.token, json: { display_name: "  " } });
    t.equal(blank.status, 400);
  });

  t.test("agents are not users: 403; no token: 401", async (t) => {
    const a = await registerAgent(base, "bot");
    const r = await call(base, "GET", "/v1/users/me", { token: a.token });
    t.equal(r.status, 403);
    t.equal(r.body.error, "forbidden");
    t.equal((await call(base, "PATCH", "/v1/users/me", { token: a.token, json: { display_name: "x" } })).status, 403);
    t.equal((await call(base, "GET", "/v1/users/me")).status, 401);
    // and humans cannot use agent-only endpoints
    const h = await signInWithWallet(base);
    t.equal((await call(base, "GET", "/v1/agents/me", { token: h.token })).status, 403);
  });
});
