// Paying a paid agent from the web app, on the local chain (hardhat + the local facilitator, as npm run
// payments:dev starts them): a human signed in through an injected test wallet finds the agent in the marketplace,
// sees its price, sends; the wallet signs the EIP-3009 authorization (eth_signTypedData_v4) and the message carries
// a settled badge. The agent's operator, signed in with the agent's token, sees the same badge, and both payments
// pages list the payment as settled. On both sides the badge's explorer link opens the local explorer's page of
// that transaction (the payer's fUSD going to the agent's payTo). A screenshot of the paid conversation goes to
// test-output/web/payment.png.
import t, { type Test } from "tap";
import { hardhatAccount, startPaymentsEnv } from "../runtime/payments/local/dev.ts";
import { buildWeb } from "../web/build.mjs";
import { startTestNode } from "./helpers/node.ts";
import { call } from "./helpers/http.ts";
import { launch, NO_BROWSER, type Page, shot, signInWithWallet, walletContext, watchErrors } from "./helpers/web.ts";
import { paidAgent } from "./payments-helpers.ts";

if (NO_BROWSER) {
  t.plan(0, NO_BROWSER); // the whole file: reported as skipped, with the reason
} else {
  await buildWeb();
  const payer = hardhatAccount(4);
  const env = await startPaymentsEnv({ fund: [payer.address] });
  t.teardown(() => env.stop());
  const node = await startTestNode(t, { engine: "memory", env: env.env });

  /** Follows the paid message's explorer link in the browser and checks the page it opens shows transaction `tx`. */
  async function followExplorerLink(t: Test, page: Page, text: string, tx: string): Promise<void> {
    const link = page.locator("[data-message]", { hasText: text }).getByRole("link", { name: "View transaction" });
    t.equal(
      await link.getAttribute("href"),
      `${env.explorer.txUrl}${tx}`,
      "the badge links to the local explorer's page of the transaction",
    );
    const [opened] = await Promise.all([page.context().waitForEvent("page"), link.click()]);
    await opened.waitForLoadState();
    t.equal(opened.url(), `${env.explorer.txUrl}${tx}`);
    t.equal(await opened.locator('[data-field="hash"]').innerText(), tx, "the explorer shows that transaction");
    t.equal(await opened.locator('[data-field="status"]').innerText(), "success");
    const transfer = opened.locator("[data-transfer]");
    t.equal(await transfer.locator("[data-amount]").innerText(), "0.05 fUSD");
    t.equal(
      (await transfer.locator("[data-from]").innerText()).toLowerCase(),
      payer.address.toLowerCase(),
      "from the human's wallet",
    );
    t.equal(
      (await transfer.locator("[data-to]").innerText()).toLowerCase(),
      payTo.toLowerCase(),
      "to the agent's payTo",
    );
    await opened.close();
  }
  let payTo = "";

  t.test("a human pays a paid agent; both see the settled payment", async (t) => {
    const oracle = await paidAgent(node.url, env.network, 0.05, "Harbour Oracle");
    payTo = oracle.payTo;
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
    const sent = await call(node.url, "GET", "/v1/payments", {
      token: (await ph.evaluate(() => JSON.parse(localStorage.getItem("flock.session") ?? "{}") as { token: string }))
        .token,
    });
    const hash = (sent.body as { payments: { transaction: string }[] }).payments[0]?.transaction ?? "";
    t.match(hash, /^0x[0-9a-f]{64}$/, "the payment's transaction");
    await followExplorerLink(t, ph, "Will it rain tomorrow?", hash);

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
    await po
      .locator("[data-message]", { hasText: "Will it rain tomorrow?" })
      .getByText("Paid $0.05 · settled")
      .waitFor(wait);
    await followExplorerLink(t, po, "Will it rain tomorrow?", hash);
    await po.getByRole("link", { name: "Payments" }).click();
    await po.locator('[data-status="settled"]', { hasText: "Received $0.05" }).waitFor(wait);

    // the 402 that starts the x402 exchange is logged by the browser as a failed load: the one expected console line
    const errors = [...eh.errors, ...eo.errors].filter((e) => !/status of 402/.test(e));
    t.same(errors, [], "no other console or page error");
  });
}
