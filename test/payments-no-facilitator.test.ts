// A server without FACILITATOR_URL: what the marketplace lists and what a send does agree. An unpaid send to a
// listed paid agent answers 402 with the agent's requirements (they depend only on its terms); a paid retry,
// which no facilitator can settle, answers 503 payments_unavailable, and nothing is claimed, charged or delivered.
// No chain needed: the payments are signed offline and never reach one.
import t from "tap";
import { decodePaymentRequiredHeader } from "@x402/core/http";
import type { PaymentRequirements } from "@x402/core/types";
import { call, registerAgent } from "./helpers/http.ts";
import { startTestNode } from "./helpers/node.ts";
import { freshAccount, signedHeader } from "./payments-helpers.ts";

const PAY_TO = "0x52908400098527886E0F7030069857D2E4169EE7";

for (const engine of ["memory", "redis"] as const) {
  t.test(`no facilitator: 402 with the requirements, a paid retry 503 payments_unavailable (${engine})`, async (t) => {
    const node = await startTestNode(t, { engine });
    t.equal(node.config.FACILITATOR_URL, undefined, "no facilitator configured");
    const base = node.url;
    const seller = await registerAgent(base, "Seller");
    const on = await call(base, "PATCH", "/v1/agents/me", {
      token: seller.token,
      json: { x402_enabled: true, price: 0.05, pay_to: PAY_TO },
    });
    t.equal(on.status, 200);
    const buyer = await registerAgent(base, "Buyer");

    const listed = await call(base, "GET", "/v1/agents/marketplace", { token: buyer.token });
    t.same(
      listed.body.agents.map((a: { id: string }) => a.id),
      [seller.id],
      "the marketplace lists the agent",
    );

    const unpaid = await call(base, "POST", "/v1/messages", {
      token: buyer.token,
      json: { to: seller.id, body: "hi" },
    });
    t.equal(unpaid.status, 402, "a send to a listed paid agent asks for payment");
    t.equal(unpaid.body.error, "payment_required");
    const want: PaymentRequirements = {
      scheme: "exact",
      network: "eip155:196",
      asset: "0x779Ded0c9e1022225f8E0630b35a9b54bE713736",
      amount: "50000",
      payTo: PAY_TO,
      maxTimeoutSeconds: 300,
      extra: { name: "USD₮0", version: "1" },
    };
    t.same(unpaid.body.accepts, [want], "the requirements follow from the agent's terms");
    t.same(decodePaymentRequiredHeader(unpaid.headers.get("payment-required")!).accepts, [want]);
    const threads = await call(base, "GET", "/v1/threads", { token: buyer.token });
    t.same(threads.body.threads, [], "the unpaid attempt left no empty conversation behind");

    const account = freshAccount();
    for (const name of ["PAYMENT-SIGNATURE", "X-PAYMENT"]) {
      const header = await signedHeader(account, want);
      const paid = await call(base, "POST", "/v1/messages", {
        token: buyer.token,
        json: { to: seller.id, body: "paid hi" },
        headers: { [name]: header },
      });
      t.equal(paid.status, 503, `${name}: no facilitator can settle it`);
      t.same(Object.keys(paid.body).sort(), ["error", "message"]);
      t.equal(paid.body.error, "payments_unavailable");
      t.match(paid.body.message, /not configured/);
    }
    const refused = await call(base, "POST", "/v1/messages", {
      token: buyer.token,
      json: { to: seller.id, body: "underpaid" },
      headers: { "PAYMENT-SIGNATURE": await signedHeader(account, want, { amount: "1" }) },
    });
    t.equal(refused.status, 402, "a payment that does not fit is refused as with a facilitator");
    t.equal(refused.body.reason, "amount_too_low");

    const [written] = await node.svc.sql<{ payments: number; messages: number }[]>`
      select (select count(*)::int from payments) as payments, (select count(*)::int from messages) as messages`;
    t.same(written, { payments: 0, messages: 0 }, "nothing claimed, charged or stored");
    const sent = await call(base, "GET", "/v1/payments", { token: buyer.token });
    t.same(sent.body.payments, []);
    const pending = await call(base, "GET", "/v1/messages/pending?timeout=0", { token: seller.token });
    t.same(pending.body.messages, [], "nothing delivered");
  });
}

t.test(
  "a facilitator that does not answer: 503 payments_unavailable, and the authorization stays usable",
  async (t) => {
    const node = await startTestNode(t, { engine: "memory", env: { FACILITATOR_URL: "http://127.0.0.1:9" } }); // nothing listens there
    const base = node.url;
    const seller = await registerAgent(base, "Seller");
    await call(base, "PATCH", "/v1/agents/me", {
      token: seller.token,
      json: { x402_enabled: true, price: 0.05, pay_to: PAY_TO },
    });
    const buyer = await registerAgent(base, "Buyer");
    const unpaid = await call(base, "POST", "/v1/messages", {
      token: buyer.token,
      json: { to: seller.id, body: "hi" },
    });
    t.equal(unpaid.status, 402);
    const header = await signedHeader(freshAccount(), unpaid.body.accepts[0]);
    for (const attempt of ["first", "again"]) {
      const paid = await call(base, "POST", "/v1/messages", {
        token: buyer.token,
        json: { to: seller.id, body: "paid hi" },
        headers: { "PAYMENT-SIGNATURE": header },
      });
      t.equal(paid.status, 503, `${attempt}: not verified`);
      t.equal(
        paid.body.error,
        "payments_unavailable",
        "not a conflict: nothing went on chain, so it may be sent again",
      );
    }
    const sent = await call(base, "GET", "/v1/payments", { token: buyer.token });
    t.same(
      sent.body.payments.map((p: { status: string }) => p.status),
      ["failed"],
      "one claim, failed at verification; nothing charged",
    );
    t.same((await call(base, "GET", "/v1/messages/pending?timeout=0", { token: seller.token })).body.messages, []);
  },
);
