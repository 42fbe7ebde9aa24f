// A person's first hour with the web app, in headless Debian chromium at a desktop (1280 px) and a phone (375 px)
// width: a new name in Profile is the header's at once, after a reload, and the next moment's, and a name changed
// on another device shows after a reload; an address's initials are not "0". A person who signed up with a passkey
// links the browser's wallet in Profile and then pays a paid agent on the local chain (hardhat and the local
// facilitator, as npm run payments:dev starts them; the banner first sends them to Profile); another browser holding
// the same wallet knows it on sign-in. At 127.0.0.1 the passkey buttons explain that passkeys need a name and link the
// same page on localhost, and no raw browser error shows. Screenshots go to test-output/web/first-hour-*.png.
import t from "tap";
import { hardhatAccount, startPaymentsEnv } from "../runtime/payments/local/dev.ts";
import { buildWeb } from "../web/build.mjs";
import { call } from "./helpers/http.ts";
import { until } from "./helpers/wait.ts";
import { signInWithWallet as humanOverHttp } from "./helpers/humans.ts";
import { startTestNode } from "./helpers/node.ts";
import { paidAgent } from "./payments-helpers.ts";
import {
  launch,
  NO_BROWSER,
  type Page,
  shot,
  signInWithToken,
  virtualAuthenticator,
  walletContext,
  watchErrors,
} from "./helpers/web.ts";

const wait = { timeout: 15_000 };
const WIDTHS = [1280, 375] as const;

/** The name the header shows for the signed-in principal. */
const headerName = (page: Page) => page.locator("header.top .me span[title]");

const session = (page: Page) =>
  page.evaluate(
    () =>
      JSON.parse(localStorage.getItem("flock.session") ?? "{}") as {
        token: string;
        me: { id: string; display_name: string };
        address?: string;
      },
  );

if (NO_BROWSER) {
  t.plan(0, NO_BROWSER); // the whole file: reported as skipped, with the reason
} else {
  await buildWeb();
  // a funded wallet per width: a wallet is one person's
  const payers = { 1280: hardhatAccount(5), 375: hardhatAccount(6) };
  const env = await startPaymentsEnv({ fund: Object.values(payers).map((a) => a.address) });
  t.teardown(() => env.stop());
  const node = await startTestNode(t, { engine: "memory", env: env.env });
  const url = node.url;
  // passkeys belong to FLOCK_DOMAIN (localhost): a passkey page must be on localhost, not 127.0.0.1
  const localhost = url.replace("127.0.0.1", "localhost");
  const browser = await launch();
  t.teardown(() => browser.close());

  for (const width of WIDTHS) {
    t.test(`${width} px: a new name reaches the header, a reload and the next moment`, async (t) => {
      const person = await humanOverHttp(url);
      t.match(person.display_name, /^0x[0-9A-Fa-f]{4}…/, "a person signed in with a wallet is named by its address");
      const ctx = await browser.newContext({ viewport: { width, height: 800 } });
      t.teardown(() => ctx.close());
      const page = await ctx.newPage();
      const errs = watchErrors(page, "person");
      await signInWithToken(page, url, person.token);
      t.equal(await headerName(page).innerText(), person.display_name);

      await page.getByRole("link", { name: "Profile" }).click();
      const initials = page.getByRole("img", { name: "Your initials (no picture yet)" });
      await initials.waitFor(wait);
      const letters = (await initials.innerText()).trim();
      t.not(letters, "0", "an address's initials are not the 0 of its 0x");
      t.equal(letters, person.display_name.slice(2, 4).toUpperCase(), "but the two characters after it");

      const name = `Marina Vale ${width}`;
      await page.getByLabel("Display name").fill(name);
      await page.getByRole("button", { name: "Save profile" }).click();
      await page.getByRole("status").filter({ hasText: "Saved." }).waitFor(wait);
      await headerName(page).filter({ hasText: name }).waitFor(wait);
      t.equal(await headerName(page).innerText(), name, "the header shows the new name at once");
      t.equal((await initials.innerText()).trim(), "MV");
      await shot(page, `first-hour-renamed-${width}.png`);

      await page.reload();
      await page.getByRole("navigation", { name: "Main" }).waitFor(wait);
      t.equal(await headerName(page).innerText(), name, "and after a reload");
      t.equal((await session(page)).me.display_name, name, "the saved session has it");

      const elsewhere = `Marina on her phone ${width}`;
      const renamed = await call(url, "PATCH", "/v1/users/me", {
        token: person.token,
        json: { display_name: elsewhere },
      });
      t.equal(renamed.status, 200);
      await page.reload();
      await headerName(page).filter({ hasText: elsewhere }).waitFor(wait);
      t.equal(await headerName(page).innerText(), elsewhere, "a name changed on another device shows after a reload");

      // the start's question of who is signed in answered only after a rename made meanwhile: the old name it
      // carries must not come back (the race a loaded machine showed)
      await page.getByRole("link", { name: "Feed" }).click(); // a page that does not ask for the profile itself
      const held: (() => Promise<void>)[] = [];
      // the server's answer is taken at once (before the rename) and handed to the page only after it
      await page.route("**/v1/users/me", async (route) => {
        if (route.request().method() !== "GET" || held.length > 0) return route.continue();
        const before = await route.fetch();
        held.push(() => route.fulfill({ response: before }));
      });
      await page.reload();
      await page.getByRole("navigation", { name: "Main" }).waitFor(wait);
      await until(() => held.length === 1, { ms: 15_000, what: "the start's GET /v1/users/me, held" });
      await page.getByRole("link", { name: "Profile" }).click();
      const racing = `Marina racing ${width}`;
      await page.getByLabel("Display name").fill(racing);
      await page.getByRole("button", { name: "Save profile" }).click();
      await page.getByRole("status").filter({ hasText: "Saved." }).waitFor(wait);
      await held[0]!();
      await page.unroute("**/v1/users/me");
      await page.waitForLoadState("networkidle");
      t.equal(await headerName(page).innerText(), racing, "an older answer of who is signed in keeps the new name");
      t.equal((await session(page)).me.display_name, racing, "and so does the saved session");

      await page.getByRole("link", { name: "Feed" }).click();
      await page.getByLabel("Share a moment").fill(`Hello from ${width}`);
      await page.getByRole("button", { name: "Post", exact: true }).click();
      const moment = page.locator("[data-moment]", { hasText: `Hello from ${width}` });
      await moment.and(page.locator('[aria-busy="false"]')).waitFor(wait);
      t.equal(await moment.locator("strong").first().innerText(), racing, "the next moment carries the new name");
      await page.reload();
      await moment.waitFor(wait);
      t.equal(await moment.locator("strong").first().innerText(), racing, "as the server keeps it");
      await shot(page, `first-hour-moment-${width}.png`);
      t.same(errs.errors, [], "no console or page error");
    });

    t.test(`${width} px: a passkey account links its wallet in Profile and can pay a paid agent`, async (t) => {
      const oracle = await paidAgent(url, env.network, 0.05, `Harbour Oracle ${width}`);
      const account = payers[width];
      const { ctx, calls } = await walletContext(browser, account);
      t.teardown(() => ctx.close());
      const page = await ctx.newPage();
      await page.setViewportSize({ width, height: 800 });
      const errs = watchErrors(page, "person");
      // sign up with a passkey, from the sign-in page, with chromium's virtual authenticator
      await page.goto(localhost);
      await virtualAuthenticator(ctx, page);
      await page.getByLabel("New here? Your name").fill(`Kai ${width}`);
      await page.getByRole("button", { name: "Create an account with a passkey" }).click();
      await page.getByRole("navigation", { name: "Main" }).waitFor(wait);
      const me = await session(page);
      t.equal(me.address, undefined, "a passkey session has no wallet");

      const conversation = `${localhost}/#/chat/to/${encodeURIComponent(oracle.id)}`;
      await page.goto(conversation);
      const price = page.locator(".price");
      await price.filter({ hasText: "$0.05" }).waitFor(wait);
      t.match(await price.innerText(), /Link a wallet in Profile to pay\./, "the banner says how to pay");
      t.notMatch(await price.innerText(), /Sign in with a wallet/, "not to sign in again");
      await page.getByLabel("Message", { exact: true }).fill("Will it rain tomorrow?");
      const send = page.getByRole("button", { name: "Pay $0.05 and send" });
      t.ok(await send.isDisabled(), "no paying without a wallet");
      await shot(page, `first-hour-no-wallet-${width}.png`);

      await price.getByRole("link", { name: "Link a wallet in Profile" }).click();
      await page.getByRole("heading", { name: "Profile" }).waitFor(wait);
      const wallets = page.getByRole("region", { name: "Wallets" });
      await wallets.getByText("No wallet yet").waitFor(wait);
      await wallets.getByRole("button", { name: "Link a wallet" }).click();
      const address = account.address.toLowerCase();
      await wallets.locator(`[data-wallet="${address}"]`).waitFor(wait);
      t.ok(calls.includes("personal_sign"), "the wallet signed the challenge");
      const user = await call(url, "GET", "/v1/users/me", { token: me.token });
      t.same(user.body.user.wallets, [{ address, kind: "external" }], "the wallet is the person's");
      t.equal((await session(page)).address?.toLowerCase(), address, "the session knows the address");
      await shot(page, `first-hour-wallet-linked-${width}.png`);

      await page.goto(conversation);
      await price.filter({ hasText: "$0.05" }).waitFor(wait);
      t.notMatch(await price.innerText(), /Link a wallet/, "the banner no longer sends them to Profile");
      await page.getByLabel("Message", { exact: true }).fill("Will it rain tomorrow?");
      t.ok(await send.isEnabled(), "the pay control is offered");
      errs.state.quiet = true; // the 402 that starts paying is logged by the browser as a failed load
      await send.click();
      const sent = page.locator("[data-message]", { hasText: "Will it rain tomorrow?" });
      await sent.getByText("Paid $0.05 · settled").waitFor({ timeout: 30_000 });
      errs.state.quiet = false;
      t.ok(calls.includes("eth_signTypedData_v4"), "the linked wallet signed the payment");
      const payments = await call(url, "GET", "/v1/payments", { token: me.token });
      t.equal(
        (payments.body as { payments: { payer: string }[] }).payments[0]?.payer.toLowerCase(),
        address,
        "paid from the linked wallet, settled on the local chain",
      );
      await shot(page, `first-hour-pay-${width}.png`);

      // another browser with the same wallet, signed in with the person's token: it knows the wallet at once
      const other = await walletContext(browser, account);
      t.teardown(() => other.ctx.close());
      const second = await other.ctx.newPage();
      await second.setViewportSize({ width, height: 800 });
      await signInWithToken(second, localhost, me.token);
      await second.goto(conversation);
      await second.locator(".price").filter({ hasText: "$0.05" }).waitFor(wait);
      await second.getByLabel("Message", { exact: true }).fill("And the day after?");
      await second.getByRole("button", { name: "Pay $0.05 and send" }).and(second.locator(":enabled")).waitFor(wait);
      t.notMatch(await second.locator(".price").innerText(), /Link a wallet/);
      t.equal((await session(second)).address?.toLowerCase(), address, "the linked wallet the browser holds");
      t.notOk(other.calls.includes("eth_requestAccounts"), "found without asking the person");
      t.same(errs.errors, [], "no other console or page error");
    });

    t.test(`${width} px: at 127.0.0.1 the passkey buttons explain and link the page on localhost`, async (t) => {
      const ctx = await browser.newContext({ viewport: { width, height: 800 } });
      t.teardown(() => ctx.close());
      const page = await ctx.newPage();
      const errs = watchErrors(page, "visitor");
      await page.goto(`${url}/?from=ip`);
      const signIn = page.getByRole("button", { name: "Sign in with a passkey" });
      await signIn.waitFor(wait);
      // the browser is never asked: before, it answered with its own "This is an invalid domain."
      if (await signIn.isEnabled()) {
        await signIn.click();
        await page.getByRole("alert").waitFor(wait);
      }
      const note = page.locator("[data-passkey-host]");
      await note.waitFor({ timeout: 5_000 });
      t.match(await note.innerText(), /Passkeys need a name, not an address/);
      const port = new URL(url).port;
      t.equal(
        await note.getByRole("link").getAttribute("href"),
        `http://localhost:${port}/?from=ip`,
        "the same page on localhost",
      );
      t.ok(await signIn.isDisabled(), "the passkey buttons wait for a name");
      t.ok(await page.getByRole("button", { name: "Create an account with a passkey" }).isDisabled());
      t.notMatch(await page.locator("body").innerText(), /invalid domain/i, "no raw browser error");
      t.notMatch(await page.locator("body").innerText(), /This browser cannot use passkeys/, "nor a wrong reason");
      await shot(page, `first-hour-ip-${width}.png`);

      await note.getByRole("link").click();
      await page.waitForURL(`http://localhost:${port}/?from=ip`);
      await signIn.waitFor(wait);
      t.equal(await page.locator("[data-passkey-host]").count(), 0, "on localhost no note");
      t.ok(await signIn.isEnabled(), "and the passkey buttons work");
      t.same(errs.errors, [], "no console or page error");
    });
  }
}
