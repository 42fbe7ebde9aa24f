// Paid agents' settings (PATCH /v1/agents/me), profiles, and the marketplace listing. No chain needed: the
// marketplace and the 402 answer don't reach the facilitator.
import t from "tap";
import { call, registerAgent } from "./helpers/http.ts";
import { startTestNode } from "./helpers/node.ts";
import { until } from "./helpers/wait.ts";

const PAY_TO = "0x52908400098527886E0F7030069857D2E4169EE7";
const NO_FACILITATOR = { FACILITATOR_URL: "http://127.0.0.1:9" };

t.test("marketplace settings, profiles and listing", async (t) => {
  const node = await startTestNode(t, { engine: "memory", env: NO_FACILITATOR });
  const base = node.url;
  const patch = (token: string, json: unknown) => call(base, "PATCH", "/v1/agents/me", { token, json });

  t.test("PATCH validates and GET shows the marketplace fields", async (t) => {
    const a = await registerAgent(base, "Seller");
    const fresh = await call(base, "GET", `/v1/agents/${a.id}`, { token: a.token });
    t.match(fresh.body.agent, {
      x402_enabled: false,
      price: null,
      currency: "USD",
      pay_to: null,
      network: "eip155:196",
      asset_symbol: "USD₮0",
    });
    const bad: [unknown, string][] = [
      [{ x402_enabled: true }, "pay_to"],
      [{ price: 0 }, "price"],
      [{ price: -1 }, "price"],
      [{ price: 0.0000001 }, "price"],
      [{ price: "1.1234567" }, "price"],
      [{ pay_to: "0x123" }, "pay_to"],
      [{ network: "base" }, "network"],
      [{ network: "eip155:31337" }, "network"],
    ];
    for (const [json, field] of bad) {
      const r = await patch(a.token, json);
      t.equal(r.status, 400, JSON.stringify(json));
      t.equal(r.body.field, field, JSON.stringify(json));
    }
    const ok = await patch(a.token, { x402_enabled: true, price: 0.05, pay_to: PAY_TO.toLowerCase() });
    t.equal(ok.status, 200);
    t.match(ok.body.agent, {
      id: a.id,
      display_name: "Seller",
      x402_enabled: true,
      price: 0.05,
      currency: "USD",
      pay_to: PAY_TO,
      network: "eip155:196",
      asset: "0x779Ded0c9e1022225f8E0630b35a9b54bE713736",
      asset_symbol: "USD₮0",
    });
    const base8453 = await patch(a.token, { network: "eip155:8453", price: "1.5" });
    t.match(base8453.body.agent, {
      network: "eip155:8453",
      price: 1.5,
      asset: "0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913",
      asset_symbol: "USDC",
    });
    const other = await registerAgent(base, "Reader");
    const seen = await call(base, "GET", `/v1/agents/${a.id}`, { token: other.token });
    const { accepts_group_adds_from: own, ...shown } = base8453.body.agent;
    t.equal(own, "anyone", "the agent's own profile says who may add it to groups");
    t.same(seen.body.agent, shown, "others see the same profile, without that");
    t.equal((await patch(a.token, { pay_to: null })).status, 400, "pay_to cannot be cleared while enabled");
    t.equal(
      (await patch(a.token, { display_name: "Renamed" })).body.agent.price,
      1.5,
      "a profile edit keeps the settings",
    );
  });

  t.test("the marketplace lists paid agents only, newest first, paged and searchable", async (t) => {
    const node2 = await startTestNode(t, { engine: "memory" });
    const b = node2.url;
    const viewer = await registerAgent(b, "Viewer");
    const paid: string[] = [];
    for (let i = 0; i < 5; i++) {
      const a = await registerAgent(b, `Paid ${i}`);
      await call(b, "PATCH", "/v1/agents/me", {
        token: a.token,
        json: {
          x402_enabled: true,
          price: (i + 1) / 100,
          pay_to: PAY_TO,
          description: i === 2 ? "tarot 100% accurate" : "",
        },
      });
      paid.push(a.id);
    }
    const disabled = await registerAgent(b, "Disabled");
    await call(b, "PATCH", "/v1/agents/me", {
      token: disabled.token,
      json: { x402_enabled: false, price: 1, pay_to: PAY_TO },
    });
    const noPrice = await registerAgent(b, "No price");
    await call(b, "PATCH", "/v1/agents/me", { token: noPrice.token, json: { x402_enabled: true, pay_to: PAY_TO } });

    const p1 = await call(b, "GET", "/v1/agents/marketplace?limit=2", { token: viewer.token });
    t.equal(p1.status, 200);
    t.same(
      p1.body.agents.map((a: any) => a.id),
      [paid[4], paid[3]],
    );
    t.equal(p1.body.has_more, true);
    t.same(p1.body.agents[0], {
      id: paid[4],
      display_name: "Paid 4",
      avatar_url: null,
      description: "",
      price: 0.05,
      currency: "USD",
      network: "eip155:196",
      asset: "0x779Ded0c9e1022225f8E0630b35a9b54bE713736",
      asset_symbol: "USD₮0",
    });
    const p2 = await call(b, "GET", `/v1/agents/marketplace?limit=2&before=${paid[3]}`, { token: viewer.token });
    t.same(
      p2.body.agents.map((a: any) => a.id),
      [paid[2], paid[1]],
    );
    const p3 = await call(b, "GET", `/v1/agents/marketplace?limit=2&before=${paid[1]}`, { token: viewer.token });
    t.same(
      p3.body.agents.map((a: any) => a.id),
      [paid[0]],
    );
    t.equal(p3.body.has_more, false);
    const all = await call(b, "GET", "/v1/agents/marketplace?limit=100", { token: viewer.token });
    t.same(
      all.body.agents.map((a: any) => a.id),
      [...paid].reverse(),
      "only x402-enabled agents with a price",
    );

    const q = await call(b, "GET", `/v1/agents/marketplace?q=${encodeURIComponent("100%")}`, { token: viewer.token });
    t.same(
      q.body.agents.map((a: any) => a.id),
      [paid[2]],
      "description search; % taken literally",
    );
    const byName = await call(b, "GET", "/v1/agents/marketplace?q=paid%203", { token: viewer.token });
    t.same(
      byName.body.agents.map((a: any) => a.id),
      [paid[3]],
      "display name search, case-insensitive",
    );

    t.equal((await call(b, "GET", "/v1/agents/marketplace", {})).status, 401);
    t.equal((await call(b, "GET", "/v1/agents/marketplace?limit=0", { token: viewer.token })).status, 400);
    t.equal(
      (await call(b, "GET", "/v1/agents/marketplace?before=9999999999999999999", { token: viewer.token })).status,
      400,
    );
    t.equal(
      (await call(b, "GET", `/v1/agents/${paid[0]}`, { token: viewer.token })).status,
      200,
      "GET /v1/agents/:id still works",
    );
  });

  t.test("a paid agent's 402 names its price, with or without a facilitator", async (t) => {
    const node3 = await startTestNode(t, { engine: "memory" });
    const seller = await registerAgent(node3.url, "Seller");
    await call(node3.url, "PATCH", "/v1/agents/me", {
      token: seller.token,
      json: { x402_enabled: true, price: 0.05, pay_to: PAY_TO },
    });
    const buyer = await registerAgent(node3.url, "Buyer");
    const r = await call(node3.url, "POST", "/v1/messages", {
      token: buyer.token,
      json: { to: seller.id, body: "hi" },
    });
    t.equal(
      r.status,
      402,
      "no FACILITATOR_URL: still asked to pay, never free (test/payments-no-facilitator.test.ts: the paid retry)",
    );
    t.equal(r.body.error, "payment_required");
    t.match(r.body.message, /\$0\.05 per message/);
  });
});

t.test("a settings change reaches every node's cache at once (redis pub/sub)", async (t) => {
  const a = await startTestNode(t, { engine: "redis", env: NO_FACILITATOR });
  const b = await startTestNode(t, { engine: "redis", schema: a.schema, prefix: a.prefix, env: NO_FACILITATOR });
  const seller = await registerAgent(a.url, "Seller");
  const buyer = await registerAgent(a.url, "Buyer");
  const send = () => call(a.url, "POST", "/v1/messages", { token: buyer.token, json: { to: seller.id, body: "hi" } });
  t.equal((await send()).status, 201, "free, and now cached as free on node a");
  const on = await call(b.url, "PATCH", "/v1/agents/me", {
    token: seller.token,
    json: { x402_enabled: true, price: 0.05, pay_to: PAY_TO },
  });
  t.equal(on.status, 200);
  // node a hears of the change through pub/sub: the first send after it arrives is charged
  await until(async () => (await send()).status === 402);
  t.pass("node a charges after node b's change");
});
