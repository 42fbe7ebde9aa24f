// The paid-agent terms cache is bounded even when its invalidation is lost (published while Redis was down, or
// heard by no node): a cached row lives TERMS_TTL_MS on the node's clock, then the next send reads Postgres again.
import t from "tap";
import postgres from "postgres";
import { TERMS_TTL_MS } from "../runtime/payments/terms.ts";
import { call, registerAgent } from "./helpers/http.ts";
import { TEST_DATABASE_URL } from "./helpers/env.ts";
import { startTestNode } from "./helpers/node.ts";

const PAY_TO = "0x52908400098527886E0F7030069857D2E4169EE7";

t.test("a paid agent's terms, changed without an invalidation, are read again after their lifetime", async (t) => {
  let now = 1_800_000_000_000;
  const node = await startTestNode(t, { engine: "memory", now: () => now });
  const seller = await registerAgent(node.url, "Seller");
  const on = await call(node.url, "PATCH", "/v1/agents/me", {
    token: seller.token,
    json: { x402_enabled: true, price: 0.05, pay_to: PAY_TO },
  });
  t.equal(on.status, 200);
  const buyer = await registerAgent(node.url, "Buyer");
  const send = (body: string) =>
    call(node.url, "POST", "/v1/messages", { token: buyer.token, json: { to: seller.id, body } });

  t.equal((await send("first")).status, 402, "paid: the row is read and cached");

  // the agent stops charging, but no node hears of it (as when the publish is lost while Redis is down)
  const sql = postgres(TEST_DATABASE_URL, { max: 1, onnotice: () => {}, connection: { search_path: node.schema } });
  t.teardown(() => sql.end());
  await sql`update paid_agents set x402_enabled = false where principal = ${seller.id}`;

  now += TERMS_TTL_MS - 1_000;
  t.equal((await send("cached")).status, 402, "within its lifetime the cached row still answers");
  now += 2_000;
  t.equal((await send("expired")).status, 201, "past its lifetime the row is read again: free now");
});
