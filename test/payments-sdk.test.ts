// The SDK pays paid agents: automatically with a viem account under spending caps, or raising
// PaymentRequiredError with the requirements. The recipient gets the payment over the WebSocket too.
// Local chain + facilitator start once for this file; the node runs the memory engines.
import t from "tap";
import { Flock, PaymentRequiredError } from "../client/index.ts";
import { Payer } from "../client/payments.ts";
import { hardhatAccount, startPaymentsEnv } from "../runtime/payments/local/dev.ts";
import { balanceOf } from "../runtime/payments/local/token.ts";
import { startTestNode } from "./helpers/node.ts";
import { fromRandomIp } from "./helpers/http.ts";
import { freshAccount } from "./payments-helpers.ts";

const payer = hardhatAccount(3);
const env = await startPaymentsEnv({ fund: [payer.address] });
t.teardown(() => env.stop());
const node = await startTestNode(t, { engine: "memory", env: env.env });

const client = (opts: Partial<ConstructorParameters<typeof Flock>[0]> = {}) =>
  new Flock({
    baseUrl: node.url,
    sendsPerSecond: 1000,
    fetch: fromRandomIp,
    ...opts,
  });

async function paidOracle(price: number) {
  const oracle = client();
  await oracle.register({ display_name: "Oracle", description: "answers for a fee" });
  const payTo = freshAccount().address;
  const me = await oracle.updateMe({ x402_enabled: true, price, pay_to: payTo, network: env.network });
  return { oracle, id: me.id, payTo, me };
}

t.test("updateMe and marketplace show the paid agent", async (t) => {
  const { oracle, me, payTo } = await paidOracle(0.1);
  t.match(me, {
    x402_enabled: true,
    price: 0.1,
    currency: "USD",
    pay_to: payTo,
    network: "eip155:31337",
    asset_symbol: "fUSD",
  });
  const page = await oracle.marketplace({ q: "for a fee" });
  t.ok(page.agents.some((a) => a.id === me.id && a.price === 0.1));
});

t.test("without an account, send raises PaymentRequiredError with the requirements", async (t) => {
  const { id } = await paidOracle(0.05);
  const alice = client();
  await alice.register({ display_name: "Alice" });
  const err = await alice.send(id, "hi").catch((e: unknown) => e);
  t.ok(err instanceof PaymentRequiredError);
  const e = err as PaymentRequiredError;
  t.equal(e.status, 402);
  t.match(e.requirements, { x402Version: 2, accepts: [{ scheme: "exact", amount: "50000", network: "eip155:31337" }] });
});

t.test("with an account, send pays; the recipient receives the payment over the WebSocket", async (t) => {
  const { oracle, id, payTo } = await paidOracle(0.15);
  const wallet = new Payer({ account: payer, maxPerMessage: 1, maxPerSession: 0.4 });
  const alice = client({ payments: wallet });
  await alice.register({ display_name: "Alice" });
  const ac = new AbortController();
  const inbox = oracle.messages({ transport: "ws", signal: ac.signal })[Symbol.asyncIterator]();
  const sent = await alice.send(id, "paid question");
  t.match(sent.payment, { network: "eip155:31337", payer: payer.address, amount: "150000" });
  t.equal(await balanceOf(env.chain.rpcUrl, env.token, payTo as `0x${string}`), 150_000n);
  const got = await inbox.next();
  t.same(got.value?.payment, sent.payment, "same payment on the WebSocket");
  ac.abort();
  await inbox.return?.(undefined);
  t.equal(wallet.spent, 150_000n);

  const payments = await alice.payments();
  t.match(payments.payments[0], { status: "settled", direction: "sent", transaction: sent.payment!.transaction });

  // the free path is unchanged for a client with an account
  const bob = client();
  const reg = await bob.register({ display_name: "Bob" });
  t.notOk((await alice.send(reg.agent.id, "free")).payment);

  // caps: 0.15 + 0.15 + 0.15 > 0.4 on the third; a price above the per-message cap is never signed
  await alice.send(id, "second");
  const over = await alice.send(id, "third").catch((e: unknown) => e);
  t.ok(over instanceof PaymentRequiredError, "the session cap stops the third payment");
  t.match(
    (over as Error).message,
    /^paying \$0\.15 would pass this client's session cap \(\$0\.40, \$0\.10 left\)/,
    "in dollars",
  );
  const { id: pricey } = await paidOracle(2);
  const tooDear = await alice.send(pricey, "how much?").catch((e: unknown) => e);
  t.match(
    (tooDear as Error).message,
    /^the price \(\$2\.00\) is above this client's per-message cap \(\$1\.00\)/,
    "in dollars",
  );
  t.equal(wallet.spent, 300_000n);
});

t.test(
  "the README's form: payments as plain settings ({ account, maxPerMessage, maxPerSession }) pays too",
  async (t) => {
    const { id } = await paidOracle(0.05);
    const alice = client({ payments: { account: payer, maxPerMessage: 1, maxPerSession: 10 } });
    await alice.register({ display_name: "Alice" });
    const sent = await alice.send(id, "paid with plain settings");
    t.match(sent.payment, { payer: payer.address, amount: "50000" });
    const capped = client({ payments: { account: payer, maxPerMessage: 0.01 } });
    await capped.register({ display_name: "Capped" });
    const err = await capped.send(id, "too dear").catch((e: unknown) => e);
    t.ok(err instanceof PaymentRequiredError);
    t.equal((err as Error).message.split(":")[0], "the price ($0.05) is above this client's per-message cap ($0.01)");
  },
);
