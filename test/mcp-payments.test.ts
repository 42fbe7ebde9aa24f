// Paying through the MCP server (stdio): pay_and_send settles on the local chain within the operator's caps, and a
// price above them is refused without signing (no payment on chain, none recorded), the error naming the price, the
// asset, whom it would pay and the caps. Without a wallet, send_message to a paid agent says the same.
import t from "tap";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { Flock } from "../client/index.ts";
import { startPaymentsEnv } from "../runtime/payments/local/dev.ts";
import { balanceOf } from "../runtime/payments/local/token.ts";
import { callError, callJson, ensureClientBuilt, stdioClient } from "./helpers/mcp.ts";
import { randomIp } from "./helpers/http.ts";
import { startTestNode } from "./helpers/node.ts";
import { freshAccount } from "./payments-helpers.ts";

await ensureClientBuilt();
const key = generatePrivateKey();
const wallet = privateKeyToAccount(key);
const env = await startPaymentsEnv({ fund: [wallet.address] });
t.teardown(() => env.stop());
const node = await startTestNode(t, { engine: "memory", env: env.env });
const sdk = () =>
  new Flock({
    baseUrl: node.url,
    fetch: (u, i) =>
      fetch(u, { ...i, headers: { ...(i?.headers as Record<string, string>), "x-forwarded-for": randomIp() } }),
  });
const balance = (a: string) => balanceOf(env.chain.rpcUrl, env.token, a as `0x${string}`);

async function paidAgent(price: number) {
  const agent = sdk();
  const reg = await agent.register({ display_name: `Oracle ${price}`, description: "answers for a fee" });
  const payTo = freshAccount().address;
  await agent.updateMe({ x402_enabled: true, price, pay_to: payTo, network: env.network });
  return { id: reg.agent.id, payTo, agent };
}

t.test("pay_and_send within the caps settles; above them nothing is signed", async (t) => {
  const cheap = await paidAgent(0.05);
  const dear = await paidAgent(0.5);
  const alice = sdk();
  const reg = await alice.register({ display_name: "Alice" });
  const mcp = await stdioClient({
    FLOCK_URL: node.url,
    FLOCK_TOKEN: reg.token,
    FLOCK_MCP_PRIVATE_KEY: key,
    FLOCK_MCP_MAX_PER_MESSAGE: "0.1",
    FLOCK_MCP_MAX_TOTAL: "0.08",
  });
  t.teardown(() => mcp.close());
  const start = await balance(wallet.address);

  const market = await callJson<{ agents: { id: string; price: number }[]; payments: string }>(mcp, "marketplace", {
    q: "for a fee",
  });
  t.ok(
    market.agents.some((a) => a.id === cheap.id && a.price === 0.05),
    "the marketplace lists the paid agent",
  );
  t.match(market.payments, /\$0\.1 per message and \$0\.08 in total/);

  // send_message never pays: the 402 comes back as a tool error that points to pay_and_send
  t.match(
    await callError(mcp, "send_message", { to: cheap.id, body: "free?" }),
    /payment required: Oracle 0\.05 \(agent \d+\) charges \$0\.05 per message \(US dollars: 50000 atomic units.*paid to 0x[0-9a-fA-F]{40}.*call the tool pay_and_send/,
  );

  const sent = await callJson<{ id: string; payment: { amount: string; transaction: string; payer: string } }>(
    mcp,
    "pay_and_send",
    { to: cheap.id, body: "paid question" },
  );
  t.match(sent.payment, { amount: "50000", payer: wallet.address, transaction: /^0x[0-9a-f]{64}$/ });
  t.equal(await balance(cheap.payTo), 50_000n, "settled on the local chain to the agent's payTo");
  t.equal(await balance(wallet.address), start - 50_000n);
  t.match(await cheap.agent.pending({ timeout: 5 }), [
    { body: "paid question", payment: { transaction: sent.payment.transaction } },
  ]);

  // above the per-message cap: refused before signing
  const refused = await callError(mcp, "pay_and_send", { to: dear.id, body: "too dear" });
  for (const part of [
    "$0.5",
    "500000 atomic units",
    env.token,
    dear.payTo,
    "$0.1 per message",
    "$0.08 in total",
    "$0.03 left",
  ]) {
    t.ok(refused.toLowerCase().includes(part.toLowerCase()), `the refusal names ${part}`);
  }
  // within the per-message cap but past the total: refused too
  const total = await callError(mcp, "pay_and_send", { to: cheap.id, body: "one more" });
  t.match(total, /session cap/);
  t.equal(await balance(dear.payTo), 0n, "nothing paid to the dear agent");
  t.equal(await balance(wallet.address), start - 50_000n, "the wallet paid only the one message");
  t.same(await dear.agent.pending({ timeout: 0 }), [], "nothing was delivered to it");
  const payments = await alice.payments({ direction: "sent" });
  t.equal(payments.payments.length, 1, "one payment on record");
});

t.test("without a wallet, pay_and_send refuses and shows the requirements", async (t) => {
  const cheap = await paidAgent(0.05);
  const bob = sdk();
  const reg = await bob.register({ display_name: "Bob" });
  const mcp = await stdioClient({ FLOCK_URL: node.url, FLOCK_TOKEN: reg.token });
  t.teardown(() => mcp.close());
  const text = await callError(mcp, "pay_and_send", { to: cheap.id, body: "hi" });
  t.match(text, /charges \$0\.05 per message/);
  t.match(text, /no paying wallet.*nothing was signed/);
  t.equal(await balance(cheap.payTo), 0n);
});
