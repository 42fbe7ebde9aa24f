// Paying a paid agent from the web app, on the local chain (hardhat + the local facilitator, as npm run
// payments:dev starts them): a human signed in through an injected test wallet finds the agent in the marketplace,
// sees its price, sends; the wallet signs the EIP-3009 authorization (eth_signTypedData_v4) and the message carries
// a settled badge. The agent's operator, signed in with the agent's token, sees the same badge, and both payments
// pages list the payment as settled. A screenshot of the paid conversation goes to test-output/web/payment.png.
import { existsSync } from "node:fs";
import t from "tap";
import { hardhatAccount, startPaymentsEnv } from "../runtime/payments/local/dev.ts";
import { buildWeb } from "../web/build.mjs";
import { startTestNode } from "./helpers/node.ts";
import { CHROMIUM, launch, shot, signInWithWallet, walletContext, watchErrors } from "./helpers/web.ts";
import { paidAgent } from "./payments-helpers.ts";

if (!existsSync(CHROMIUM) && !process.env["CI"]) {
  t.pass(`skipped: no ${CHROMIUM} and not in CI`);
} else {
  await buildWeb();
  const payer = hardhatAccount(4);
  const env = await startPaymentsEnv({ fund: [payer.address] });
  t.teardown(() => env.stop());
  const node = await startTestNode(t, { engine: "memory", env: env.env });

  t.test("a human pays a paid agent; both see the settled payment", async (t) => {
    const oracle = await paidAgent(node.url, env.network, 0.05, "Harbour Oracle");
    const browser = await launch();
    t.teardown(() => browser.close());
    const wait = { timeout: 20_000 };
    const human = await walletContext(browser, payer);
    const ph = await human.ctx.newPage();
    const eh = watchErrors(ph, "human");
    await signInWithWallet(ph, node.url);

    await ph.getByRole("link", { name: "Agents" }).click();
    await ph.getByLabel("Search agents").fill("Harbour");
    await ph.getByRole("button", { name: "Search" }).click();
    const card = ph.locator(`[data-agent="${oracle.id}"]`);
    await card.getByText("$0.05").waitFor(wait);
    await card.getByRole("link", { name: "Message" }).click();
    await ph.locator(".price", { hasText: "$0.05" }).waitFor(wait);
    await ph.getByLabel("Message", { exact: true }).fill("Will it rain tomorrow?");
    await ph.getByRole("button", { name: "Pay $0.05 and send" }).click();
    const paid = ph.locator("[data-message]", { hasText: "Will it rain tomorrow?" });
    await paid.getByText("Paid $0.05 · settled").waitFor(wait);
    t.ok(human.calls.includes("eth_signTypedData_v4"), "the wallet signed the authorization as typed data");
    const tx = (await paid.locator(".settled").innerText()).trim();
    t.match(tx, /Paid \$0\.05 · settled/);
    await shot(ph, "payment.png");

    await ph.getByRole("link", { name: "Payments" }).click();
    await ph.locator('[data-status="settled"]', { hasText: "Sent $0.05" }).waitFor(wait);

    // the agent's operator, signed in with the agent's token
    const operator = await browser.newContext();
    const po = await operator.newPage();
    const eo = watchErrors(po, "operator");
    await po.goto(node.url);
    await po.getByRole("textbox", { name: "Token" }).fill(oracle.token);
    await po.getByRole("button", { name: "Sign in with token" }).click();
    await po.getByRole("link", { name: "Chat" }).click();
    await po.locator("[data-thread]").first().click();
    await po.locator("[data-message]", { hasText: "Will it rain tomorrow?" }).getByText("Paid $0.05 · settled").waitFor(wait);
    await po.getByRole("link", { name: "Payments" }).click();
    await po.locator('[data-status="settled"]', { hasText: "Received $0.05" }).waitFor(wait);

    // the 402 that starts the x402 exchange is logged by the browser as a failed load: the one expected console line
    const errors = [...eh.errors, ...eo.errors].filter((e) => !/status of 402/.test(e));
    t.same(errors, [], "no other console or page error");
  });
}
