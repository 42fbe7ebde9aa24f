// x402 payments end to end on a real local chain: Hardhat 2's node on 127.0.0.1, Flock USD deployed, the local
// facilitator (@x402/core + @x402/evm) settling; the chain and facilitator start once for this file.
import t from "tap";
import { decodePaymentRequiredHeader, decodePaymentResponseHeader } from "@x402/core/http";
import type { PaymentRequirements } from "@x402/core/types";
import { wrapFetchWithPayment } from "@x402/fetch";
import { createPublicClient, getAddress, type Hex, http } from "viem";
import { hardhatAccount, startPaymentsEnv } from "../runtime/payments/local/dev.ts";
import { balanceOf, localChain } from "../runtime/payments/local/token.ts";
import { call, registerAgent } from "./helpers/http.ts";
import { startTestNode } from "./helpers/node.ts";
import { freshAccount, headerValidUntil, paidAgent, sendRaw, signedHeader, x402For } from "./payments-helpers.ts";

const payer = hardhatAccount(2);
const env = await startPaymentsEnv({ fund: [payer.address] });
t.teardown(() => env.stop());
const chain = createPublicClient({ chain: localChain(env.chain.rpcUrl), transport: http(env.chain.rpcUrl) });

const node = await startTestNode(t, { engine: "redis", env: env.env });
const base = node.url;

const pendingOf = async (token: string) =>
  (await call(base, "GET", "/v1/messages/pending?timeout=0", { token })).body.messages as any[];

/** The requirements the server answers for `to` (asserting the 402 on the way). */
async function requirementsOf(from: { token: string; id: string }, to: string): Promise<PaymentRequirements> {
  const r = await sendRaw(base, from as any, to, "how much?");
  if (r.status !== 402) throw new Error(`expected 402, got ${r.status} ${r.text}`);
  return r.body.accepts[0];
}

t.test("402 answers the x402 v2 requirements, in the header and in our error body; nothing is delivered", async (t) => {
  const oracle = await paidAgent(base, env.network, 0.05);
  const alice = await registerAgent(base, "Alice");
  const r = await sendRaw(base, alice, oracle.id, "hello");
  t.equal(r.status, 402);
  t.equal(r.body.error, "payment_required");
  t.match(r.body.message, /\$0\.05 per message/);
  const want = {
    scheme: "exact",
    network: "eip155:31337",
    asset: getAddress(env.token),
    amount: "50000",
    payTo: oracle.payTo,
    maxTimeoutSeconds: 300,
    extra: { name: "Flock USD", version: "1" },
  };
  t.same(r.body.accepts, [want]);
  t.equal(r.body.x402Version, 2);
  const header = decodePaymentRequiredHeader(r.headers.get("payment-required")!);
  t.equal(header.x402Version, 2);
  t.same(header.accepts, [want]);
  t.match(header.resource.url, /\/v1\/messages$/);
  t.same(await pendingOf(oracle.token), [], "nothing delivered");
  const free = await registerAgent(base, "Free");
  t.equal((await sendRaw(base, alice, free.id, "hi")).status, 201, "free agents stay free");
});

t.test(
  "the official client (@x402/fetch + viem account) pays; the payee's balance rises by exactly the price",
  async (t) => {
    const oracle = await paidAgent(base, env.network, 0.25);
    const alice = await registerAgent(base, "Alice");
    const before = await balanceOf(env.chain.rpcUrl, env.token, oracle.payTo);
    const payFetch = wrapFetchWithPayment(fetch, x402For(payer));
    const res = await payFetch(`${base}/v1/messages`, {
      method: "POST",
      headers: { authorization: `Bearer ${alice.token}`, "content-type": "application/json" },
      body: JSON.stringify({ to: oracle.id, body: "what is the meaning of life?" }),
    });
    t.equal(res.status, 201);
    const msg = (await res.json()) as any;
    t.equal(msg.body, "what is the meaning of life?");
    t.match(msg.payment, { network: "eip155:31337", payer: payer.address, amount: "250000" });
    t.match(msg.payment.transaction, /^0x[0-9a-f]{64}$/);
    t.equal(
      msg.payment.explorer_url,
      `${env.explorer.txUrl}${msg.payment.transaction}`,
      "the local explorer's page of the transaction",
    );
    const receipt = await chain.getTransactionReceipt({ hash: msg.payment.transaction as Hex });
    t.equal(receipt.status, "success", "the transaction is mined on the local chain");
    t.equal(await balanceOf(env.chain.rpcUrl, env.token, oracle.payTo), before + 250_000n, "exactly the price arrived");
    const settle = decodePaymentResponseHeader(res.headers.get("payment-response")!);
    t.match(settle, { success: true, transaction: msg.payment.transaction, network: "eip155:31337" });

    const got = await pendingOf(oracle.token);
    t.equal(got.length, 1);
    t.same(got[0].payment, msg.payment, "the recipient sees the same payment");
    t.equal(got[0].id, msg.id);

    // stored with its payment in one statement, numbered in the oracle's inbox like any direct message
    const [stored] = await node.svc.sql<
      { seq: string }[]
    >`select seq::text from messages where id = ${msg.id.slice(4)} and recipient = ${oracle.id}`;
    t.equal(stored?.seq, "1", "the first message of the oracle's inbox");
    const again = await pendingOf(oracle.token);
    t.same(
      [again[0]?.payment, again[0]?.delivery_count],
      [msg.payment, 2],
      "delivered again until acknowledged, with the payment",
    );
    t.equal((await call(base, "POST", `/v1/messages/${msg.id}/ack`, { token: oracle.token })).status, 204);
    t.same(await pendingOf(oracle.token), [], "acknowledged like any direct message");
    const history = await call(base, "GET", `/v1/threads/${msg.thread_id}/messages`, { token: oracle.token });
    t.same(history.body.messages[0].payment, msg.payment, "history shows it too");
    for (const who of [alice, oracle]) {
      const threads = await call(base, "GET", "/v1/threads", { token: who.token });
      const thread = threads.body.threads.find((th: { id: string }) => th.id === msg.thread_id);
      t.same(thread?.last_message?.payment, msg.payment, "the threads list's last message shows it too");
    }
    const sent = await call(base, "GET", "/v1/payments", { token: alice.token });
    t.equal(sent.status, 200);
    t.match(sent.body.payments[0], {
      direction: "sent",
      status: "settled",
      counterparty: oracle.id,
      amount: "250000",
      price: 0.25,
      transaction: msg.payment.transaction,
      message_id: msg.id,
      asset_symbol: "fUSD",
    });
    const received = await call(base, "GET", "/v1/payments?direction=received", { token: oracle.token });
    t.match(received.body.payments, [{ direction: "received", counterparty: alice.id, status: "settled" }]);
    t.equal(received.body.has_more, false);
  },
);

t.test("the same signed payload again answers 409, and pays nothing more", async (t) => {
  const oracle = await paidAgent(base, env.network, 0.01);
  const alice = await registerAgent(base, "Alice");
  const header = await signedHeader(payer, await requirementsOf(alice, oracle.id));
  const first = await sendRaw(base, alice, oracle.id, "one", { "payment-signature": header });
  t.equal(first.status, 201);
  const again = await sendRaw(base, alice, oracle.id, "two", { "payment-signature": header });
  t.equal(again.status, 409);
  t.equal(again.body.error, "conflict");
  t.match(again.body.message, /nonce/);
  const asV1Name = await sendRaw(base, alice, oracle.id, "three", { "x-payment": header });
  t.equal(asV1Name.status, 409, "X-PAYMENT carries the same payload");
  t.equal(await balanceOf(env.chain.rpcUrl, env.token, oracle.payTo), 10_000n);
  t.equal((await pendingOf(oracle.token)).length, 1);
});

t.test(
  "a paid send retried with its Idempotency-Key answers its first answer: no second settlement, no 409 for the nonce",
  async (t) => {
    const oracle = await paidAgent(base, env.network, 0.03);
    const alice = await registerAgent(base, "Alice");
    const key = { "idempotency-key": `paid-${Date.now()}` };
    // the unpaid attempt's 402 is a challenge, not a result: the paid attempt with the same key runs
    const challenge = await sendRaw(base, alice, oracle.id, "paid once", key);
    t.equal(challenge.status, 402);
    const header = await signedHeader(payer, challenge.body.accepts[0]);
    const settledBefore = env.facilitator.settled();
    const first = await sendRaw(base, alice, oracle.id, "paid once", { ...key, "payment-signature": header });
    t.equal(first.status, 201, first.text);
    const again = await sendRaw(base, alice, oracle.id, "paid once", { ...key, "payment-signature": header });
    t.equal(again.status, 201);
    t.equal(again.text, first.text, "the first answer");
    t.equal(again.headers.get("idempotency-replayed"), "true");
    t.equal(env.facilitator.settled() - settledBefore, 1, "one settlement");
    t.equal(await balanceOf(env.chain.rpcUrl, env.token, oracle.payTo), 30_000n);
    t.equal((await pendingOf(oracle.token)).length, 1, "one message");
  },
);

t.test("two concurrent submissions of one payload settle once", async (t) => {
  const oracle = await paidAgent(base, env.network, 0.02);
  const alice = await registerAgent(base, "Alice");
  const header = await signedHeader(payer, await requirementsOf(alice, oracle.id));
  const settledBefore = env.facilitator.settled();
  const both = await Promise.all(
    [1, 2].map((i) => sendRaw(base, alice, oracle.id, `race ${i}`, { "payment-signature": header })),
  );
  t.same(both.map((r) => r.status).sort(), [201, 409]);
  t.equal(env.facilitator.settled() - settledBefore, 1, "one settlement");
  t.equal(await balanceOf(env.chain.rpcUrl, env.token, oracle.payTo), 20_000n);
  t.equal((await pendingOf(oracle.token)).length, 1, "one message");
});

t.test("refused payments answer 402 with the reason and deliver nothing", async (t) => {
  const oracle = await paidAgent(base, env.network, 0.05);
  const alice = await registerAgent(base, "Alice");
  const req = await requirementsOf(alice, oracle.id);
  const cases: [string, string, RegExp][] = [
    ["wrong address", await signedHeader(payer, req, { payTo: freshAccount().address }), /recipient_mismatch/],
    ["too little", await signedHeader(payer, req, { amount: "49999" }), /amount_too_low/],
    ["expired", await headerValidUntil(payer, req, Math.floor(Date.now() / 1000) - 60), /expired/],
    ["empty wallet", await signedHeader(freshAccount(), req), /insufficient|simulation|balance/],
    ["not a payload", "bm90IGpzb24=", /invalid_payload/],
  ];
  for (const [what, header, reason] of cases) {
    const r = await sendRaw(base, alice, oracle.id, what, { "payment-signature": header });
    t.equal(r.status, 402, what);
    t.equal(r.body.error, "payment_required", what);
    t.match(r.body.reason, reason, what);
    t.ok(r.headers.get("payment-required"), `${what}: requirements in the header`);
    t.equal(r.body.accepts?.[0]?.amount, "50000", `${what}: requirements in the body`);
  }
  t.same(await pendingOf(oracle.token), [], "nothing delivered");
  t.equal(await balanceOf(env.chain.rpcUrl, env.token, oracle.payTo), 0n, "nothing paid");
  const rows = await node.svc
    .sql`select count(*)::int as n from messages m join threads th on th.id = m.thread_id where m.recipient = ${oracle.id}`;
  t.equal(rows[0]?.n, 0, "no message half-written");
  const mine = await call(base, "GET", "/v1/payments", { token: alice.token });
  t.match(
    mine.body.payments,
    [{ status: "failed", transaction: null, message_id: null }],
    "the empty-wallet claim is recorded as failed",
  );
});

t.test("a claim that failed verification may be retried; the retry is verified again", async (t) => {
  const oracle = await paidAgent(base, env.network, 0.03);
  const alice = await registerAgent(base, "Alice");
  const poor = freshAccount();
  const header = await signedHeader(poor, await requirementsOf(alice, oracle.id));
  t.equal((await sendRaw(base, alice, oracle.id, "first", { "payment-signature": header })).status, 402);
  const { mint } = await import("../runtime/payments/local/token.ts");
  await mint(env.chain.rpcUrl, env.minter, env.token, [poor.address], 1_000_000n);
  const retry = await sendRaw(base, alice, oracle.id, "funded now", { "payment-signature": header });
  t.equal(retry.status, 201, "the same authorization settles once the wallet is funded");
  t.equal(await balanceOf(env.chain.rpcUrl, env.token, oracle.payTo), 30_000n);
});

t.test("group messages to a group with a paid agent are refused", async (t) => {
  const oracle = await paidAgent(base, env.network, 0.05);
  const alice = await registerAgent(base, "Alice");
  const bob = await registerAgent(base, "Bob");
  const g = await call(base, "POST", "/v1/groups", {
    token: alice.token,
    json: { name: "g", members: [bob.id, oracle.id] },
  });
  t.equal(g.status, 201);
  const r = await call(base, "POST", `/v1/groups/${g.body.group.id}/messages`, {
    token: alice.token,
    json: { body: "hi all" },
  });
  t.equal(r.status, 400);
  t.same(r.body.paid_members, [oracle.id]);
  const own = await call(base, "POST", `/v1/groups/${g.body.group.id}/messages`, {
    token: oracle.token,
    json: { body: "the oracle speaks" },
  });
  t.equal(own.status, 201, "the paid agent itself may post");
  const outsider = await registerAgent(base, "Eve");
  const hidden = await call(base, "POST", `/v1/groups/${g.body.group.id}/messages`, {
    token: outsider.token,
    json: { body: "x" },
  });
  t.equal(hidden.status, 404, "a non-member learns nothing");
});

t.test("disabling x402 makes the agent free at once", async (t) => {
  const oracle = await paidAgent(base, env.network, 0.05);
  const alice = await registerAgent(base, "Alice");
  t.equal((await sendRaw(base, alice, oracle.id, "paid?")).status, 402);
  const off = await call(base, "PATCH", "/v1/agents/me", { token: oracle.token, json: { x402_enabled: false } });
  t.equal(off.status, 200);
  t.equal((await sendRaw(base, alice, oracle.id, "free now")).status, 201);
});
