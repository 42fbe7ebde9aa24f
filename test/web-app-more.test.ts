// More of the web app in headless Debian chromium, on one node: creating a group and managing its members from the
// chat; paging back through a conversation's history; downloading a file attachment; a real 429 shown with its
// retry time and the optimistic moment rolled back; signing in with a pasted token and sending a message with the
// keyboard alone; an accessible name on every control of every page; no horizontal scroll at phone width (375 px,
// screenshot test-output/web/phone-chat.png). Every page loads with no console error.
import { readFile } from "node:fs/promises";
import { Flock } from "@flock/client";
import t from "tap";
import { call, registerAgent } from "./helpers/http.ts";
import { signInWithWallet as humanOverHttp } from "./helpers/humans.ts";
import { befriend, post } from "./helpers/social.ts";
import {
  launch,
  NO_BROWSER,
  type Page,
  pageWidths,
  shot,
  signInWithToken,
  unnamedControls as unnamed,
  watchErrors,
  webNode,
} from "./helpers/web.ts";

const wait = { timeout: 15_000 };

/** Presses Tab until the focused element matches `selector`; fails after `max` presses. */
async function tabTo(page: Page, selector: string, max = 40): Promise<void> {
  for (let i = 0; i < max; i++) {
    await page.keyboard.press("Tab");
    if (await page.evaluate((s) => document.activeElement?.matches(s) ?? false, selector)) return;
  }
  throw new Error(`Tab never reached ${selector}`);
}

if (NO_BROWSER) {
  t.plan(0, NO_BROWSER); // the whole file: reported as skipped, with the reason
} else {
  const url = await webNode(t);
  const browser = await launch();
  t.teardown(() => browser.close());
  const alice = await humanOverHttp(url);
  const bob = await registerAgent(url, "Bob");
  const carol = await registerAgent(url, "Carol");
  await befriend(url, alice, bob);
  const errors: string[] = [];

  const ctx = await browser.newContext({ viewport: { width: 1100, height: 800 }, acceptDownloads: true });
  const pa = await ctx.newPage();
  const ea = watchErrors(pa, "alice");
  await signInWithToken(pa, url, alice.token);

  t.test("a group created from the chat, a member added and one removed", async (t) => {
    await pa.getByRole("link", { name: "Chat" }).click();
    await pa.getByRole("button", { name: "New group" }).click();
    await pa.getByLabel("Group name").fill("Harbour crew");
    await pa.getByRole("checkbox", { name: "Bob" }).check();
    await pa.getByRole("button", { name: "Create group" }).click();
    await pa.getByRole("region", { name: "Conversation with # Harbour crew" }).waitFor(wait);
    const groupId = await pa.locator("[data-group]").getAttribute("data-group");
    t.ok(groupId, "the conversation names its group");
    const members = async () =>
      (
        (await call(url, "GET", `/v1/groups/${groupId}`, { token: alice.token })).body as {
          group: { members: { id: string }[] };
        }
      ).group.members
        .map((m) => m.id)
        .sort();
    t.same(await members(), [alice.id, bob.id].sort(), "created with alice and bob");

    await pa.getByText("2 members").click();
    await pa.getByLabel("Add a member").fill(carol.id);
    await pa
      .locator(`[data-person="${carol.id}"]`)
      .getByRole("button", { name: /^Add .* to the group$/ })
      .click();
    await pa.getByText("3 members").waitFor(wait);
    t.same(await members(), [alice.id, bob.id, carol.id].sort(), "carol added");

    await pa.locator(`[data-member="${bob.id}"]`).getByRole("button", { name: "Remove" }).click();
    await pa.getByText("2 members").waitFor(wait);
    t.same(await members(), [alice.id, carol.id].sort(), "bob removed");
    t.same(await unnamed(pa), [], "every control of the chat with a group open has a name");
  });

  let bobThread = "";
  t.test("history pages backwards as the conversation scrolls up", async (t) => {
    // sent while alice is away, then acknowledged, so the conversation can only come from history
    await pa.goto("about:blank");
    const bobClient = new Flock({ baseUrl: url, token: bob.token });
    const ids: string[] = [];
    for (let i = 1; i <= 35; i++) {
      const m = await bobClient.send(alice.id, `history ${i}`);
      bobThread = m.thread_id;
      ids.push(m.id);
    }
    const acks = await Promise.all(
      ids.map((id) => call(url, "POST", `/v1/messages/${id}/ack`, { token: alice.token })),
    );
    t.same(new Set(acks.map((a) => a.status)), new Set([204]), "all acknowledged");
    await pa.goto(`${url}/#/chat/t/${bobThread}`);
    const list = pa.getByRole("list", { name: "Messages" });
    await list.getByText("history 35", { exact: true }).waitFor(wait);
    t.equal(await list.locator("[data-message]").count(), 30, "the first page: the 30 newest");
    t.equal(await list.getByText("history 1", { exact: true }).count(), 0, "the oldest not loaded yet");
    await list.evaluate((el) => el.scrollTo({ top: 0 }));
    await list.getByText("history 1", { exact: true }).waitFor(wait);
    t.equal(await list.locator("[data-message]").count(), 35, "scrolling up loaded the older page");
    t.equal(await pa.getByRole("button", { name: "Load earlier messages" }).count(), 0, "nothing older left");
    const bodies = await list.locator("[data-message] p").allInnerTexts();
    t.same(
      bodies,
      Array.from({ length: 35 }, (_, i) => `history ${i + 1}`),
      "oldest first, none twice",
    );
  });

  t.test("a file attachment downloads with its name and bytes", async (t) => {
    const bobClient = new Flock({ baseUrl: url, token: bob.token });
    const content = "Tide tables\n06:12 high\n12:30 low\n";
    const file = await bobClient.upload(new TextEncoder().encode(content), {
      name: "tides.txt",
      contentType: "text/plain",
    });
    await bobClient.send(alice.id, "the tide tables", { attachments: [file.id] });
    const msg = pa.locator("[data-message]", { hasText: "the tide tables" });
    await msg.waitFor(wait);
    t.equal(await msg.locator("img").count(), 0, "a text file is not shown inline");
    const [download] = await Promise.all([
      pa.waitForEvent("download"),
      msg.getByRole("button", { name: /Download tides\.txt/ }).click(),
    ]);
    t.equal(download.suggestedFilename(), "tides.txt");
    t.equal(await readFile((await download.path())!, "utf8"), content, "the bytes bob sent");
  });

  t.test("a 429 names its retry time and the optimistic moment is rolled back", async (t) => {
    for (let i = 1; i <= 5; i++) await post(url, alice, "public", `moment ${i}`); // the 5 per minute allowed
    await pa.getByRole("link", { name: "Feed" }).click();
    await pa.getByRole("list", { name: "Moments, newest first" }).getByText("moment 5").waitFor(wait);
    ea.state.quiet = true; // the browser logs the refused request itself
    await pa.getByLabel("Share a moment").fill("one too many");
    const [refused] = await Promise.all([
      pa.waitForResponse((r) => r.url().endsWith("/v1/moments") && r.request().method() === "POST"),
      pa.getByRole("button", { name: "Post" }).click(),
    ]);
    t.equal(refused.status(), 429, "the server refused a sixth moment within the minute");
    const retry = refused.headers()["retry-after"];
    t.match(retry, /^\d+$/);
    const alert = pa.getByRole("alert");
    await alert.waitFor(wait);
    t.equal(
      await alert.innerText().then((s) => s.replace(/×$/, "").trim()),
      `Too many requests: try again in ${retry} s.`,
      "the retry time shown",
    );
    t.equal(await pa.locator(".moment", { hasText: "one too many" }).count(), 0, "the optimistic moment is gone");
    t.equal(await pa.getByLabel("Share a moment").inputValue(), "one too many", "the text is back in the composer");
    ea.state.quiet = false;
  });

  t.test("sign in with a pasted token and send a message with the keyboard only", async (t) => {
    const first = await new Flock({ baseUrl: url, token: bob.token }).send(carol.id, "ping carol");
    const kctx = await browser.newContext({ viewport: { width: 1100, height: 800 } });
    t.teardown(() => kctx.close());
    const pk = await kctx.newPage();
    const ek = watchErrors(pk, "keyboard");
    await pk.goto(url);
    t.same(await unnamed(pk), [], "every control of the sign-in page has a name");
    await tabTo(pk, "#token");
    await pk.keyboard.insertText(carol.token); // a paste
    await pk.keyboard.press("Enter");
    await pk.getByRole("navigation", { name: "Main" }).waitFor(wait);
    await tabTo(pk, 'nav a[href="#/chat"]');
    await pk.keyboard.press("Enter");
    await tabTo(pk, `[data-thread="${first.thread_id}"]`);
    await pk.keyboard.press("Enter");
    await pk.getByRole("list", { name: "Messages" }).getByText("ping carol").waitFor(wait);
    await tabTo(pk, "#message");
    await pk.keyboard.type("pong from the keyboard");
    await pk.keyboard.press("Enter");
    await pk.locator(".msg.mine", { hasText: "pong from the keyboard" }).waitFor(wait);
    const seen = await new Flock({ baseUrl: url, token: bob.token }).threadMessages(first.thread_id);
    t.ok(
      seen.messages.some((m) => m.body === "pong from the keyboard" && m.from.id === carol.id),
      "bob's thread has carol's reply",
    );
    errors.push(...ek.errors);
  });

  t.test("every page: named controls, and no horizontal scroll at phone width", async (t) => {
    const paid = await registerAgent(url, "Lighthouse Keeper Forecasting Service");
    const patch = await call(url, "PATCH", "/v1/agents/me", {
      token: paid.token,
      json: {
        description: "Swell, wind and tide forecasts for every harbour on the coast, hour by hour, for a week ahead",
        x402_enabled: true,
        price: 0.05,
        pay_to: "0x000000000000000000000000000000000000dEaD",
        network: "eip155:196",
      },
    });
    t.equal(patch.status, 200, "a paid agent in the marketplace");
    const pages = ["#/feed", "#/friends", `#/chat/t/${bobThread}`, "#/agents", "#/payments"];
    for (const hash of pages) {
      await pa.goto(`${url}/${hash}`);
      await pa.locator("main h1, main h2").first().waitFor(wait);
      await pa
        .getByRole("status")
        .filter({ hasText: "Loading…" })
        .waitFor({ state: "detached", ...wait });
      t.same(await unnamed(pa), [], `every control of ${hash} has a name`);
    }
    const phone = await browser.newContext({ viewport: { width: 375, height: 812 }, isMobile: true, hasTouch: true });
    t.teardown(() => phone.close());
    const pp = await phone.newPage();
    const ep = watchErrors(pp, "phone");
    await signInWithToken(pp, url, alice.token);
    for (const hash of pages) {
      await pp.goto(`${url}/${hash}`);
      await pp.locator("main h1, main h2").first().waitFor(wait);
      await pp
        .getByRole("status")
        .filter({ hasText: "Loading…" })
        .waitFor({ state: "detached", ...wait });
      const { scroll, width } = await pageWidths(pp);
      t.equal(width, 375);
      t.ok(scroll <= 375, `${hash}: no horizontal scroll at 375 px (scrollWidth ${scroll})`);
      if (hash.startsWith("#/chat")) {
        await pp.getByRole("list", { name: "Messages" }).getByText("the tide tables").waitFor(wait);
        await shot(pp, "phone-chat.png");
      }
    }
    errors.push(...ep.errors);
  });

  t.test("no console or page error on any page", async (t) => {
    t.same([...ea.errors, ...errors], []);
  });
}
