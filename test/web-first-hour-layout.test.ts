// The web app's first hour, measured in headless Debian chromium at a desktop width (1280 px) and a phone's (375 px),
// with a screenshot of each to test-output/web/first-hour-*.png: a conversation with pictures opens at its newest
// message with the last bubble's actions in view; a banner during a rolling restart (a real 503 from a node
// lingering on its way down) spans the page and leaves the conversation and its composer their width; every page
// link is in view on a phone; the attachment picker shows sizes in bytes below 1 KB and a preview of a picture; an
// unknown page says so, with a link home; an online friend's dot is green; a network is named, not shown as its
// CAIP-2 id; the SDK reference loads with no console error; the payments page names the other side.
import { Flock } from "@flock/client";
import { Payer } from "../client/payments.ts";
import t from "tap";
import WebSocket from "ws";
import { hardhatAccount, startPaymentsEnv } from "../runtime/payments/local/dev.ts";
import { buildWeb } from "../web/build.mjs";
import { registerAgent } from "./helpers/http.ts";
import { signInWithWallet as humanOverHttp } from "./helpers/humans.ts";
import { startTestNode } from "./helpers/node.ts";
import { befriend } from "./helpers/social.ts";
import { paidAgent } from "./payments-helpers.ts";
import { until } from "./helpers/wait.ts";
import { launch, NO_BROWSER, type Page, png, shot, signInWithToken, watchErrors } from "./helpers/web.ts";

const wait = { timeout: 15_000 };
const WIDTHS = [
  { name: "desktop", width: 1280, height: 800 },
  { name: "phone", width: 375, height: 667 },
] as const;

/** The box of the first element matching `selector`, in viewport coordinates. */
const box = (page: Page, selector: string) =>
  page
    .locator(selector)
    .first()
    .evaluate((el) => {
      const r = el.getBoundingClientRect();
      return { left: r.left, right: r.right, top: r.top, bottom: r.bottom, width: r.width };
    });

if (NO_BROWSER) {
  t.plan(0, NO_BROWSER); // the whole file: reported as skipped, with the reason
} else {
  await buildWeb();
  const payer = hardhatAccount(5);
  const env = await startPaymentsEnv({ fund: [payer.address] });
  t.teardown(() => env.stop());
  const node = await startTestNode(t, { engine: "memory", env: env.env });
  const url = node.url;
  const browser = await launch();
  t.teardown(() => browser.close());
  // a hardhat account (derived from its mnemonic) signs as a private-key account does
  const alice = await humanOverHttp(url, payer as unknown as Parameters<typeof humanOverHttp>[1]);
  const bob = await registerAgent(url, "Bob Pictures");
  await befriend(url, alice, bob);

  const watchers: string[][] = [];
  /** A page signed in as `token` at one of the widths, its console errors gathered into `watchers`. */
  async function pageAt(w: (typeof WIDTHS)[number], token: string, who = "alice"): Promise<Page> {
    const ctx = await browser.newContext({ viewport: { width: w.width, height: w.height } });
    t.teardown(() => ctx.close());
    const page = await ctx.newPage();
    const watch = watchErrors(page, `${who} ${w.name}`);
    watchers.push(watch.errors);
    await signInWithToken(page, url, token);
    return page;
  }

  let pictureThread = "";
  t.test("a conversation with pictures opens at its newest message, its last actions in view", async (t) => {
    const client = new Flock({ baseUrl: url, token: bob.token });
    for (let i = 1; i <= 24; i++) {
      const attachments =
        i % 4 === 0
          ? [(await client.upload(new Uint8Array(png()), { name: `pic-${i}.png`, contentType: "image/png" })).id]
          : [];
      const m = await client.send(alice.id, `picture day ${i}`, attachments.length ? { attachments } : {});
      pictureThread = m.thread_id;
    }
    for (const w of WIDTHS) {
      const page = await pageAt(w, alice.token);
      await page.goto(`${url}/#/chat/t/${pictureThread}`);
      const list = page.getByRole("list", { name: "Messages" });
      await list.getByText("picture day 24", { exact: true }).waitFor(wait);
      // the pictures near the end loaded (and laid out) before measuring: they arrive after the first scroll
      await page.waitForFunction(
        () => {
          const imgs = [...document.querySelectorAll<HTMLImageElement>(".messages img")].slice(-2);
          return imgs.length === 2 && imgs.every((i) => i.complete && i.naturalWidth > 0);
        },
        undefined,
        wait,
      );
      // the list follows its pictures' growth down to the newest message (before the fix it never got there)
      await page
        .waitForFunction(
          () => {
            const el = document.querySelector(".messages")!;
            return Math.abs(el.scrollTop - (el.scrollHeight - el.clientHeight)) <= 2;
          },
          undefined,
          { timeout: 5_000 },
        )
        .catch(() => {}); // measured and reported below
      const at = await list.evaluate((el) => ({
        top: el.scrollTop,
        max: el.scrollHeight - el.clientHeight,
      }));
      t.ok(at.max > 0, `${w.name}: the list scrolls (${at.max} px)`);
      t.ok(Math.abs(at.top - at.max) <= 2, `${w.name}: at the newest message (scrollTop ${at.top} of ${at.max})`);
      const actions = await box(page, ".messages > li:last-child .msg-actions");
      const ol = await box(page, ".messages");
      t.ok(
        actions.bottom <= ol.bottom + 0.5 && actions.top >= ol.top && actions.bottom <= w.height,
        `${w.name}: the last bubble's actions are in view (${actions.top}-${actions.bottom} in ${ol.top}-${ol.bottom}, window ${w.height})`,
      );
      t.ok(actions.left >= 0 && actions.right <= w.width, `${w.name}: and not cut off sideways`);
      await shot(page, `first-hour-pictures-${w.name}.png`);
      await page.context().close();
    }
  });

  t.test("at phone width every page link is in view, none behind a sideways scroll", async (t) => {
    for (const w of WIDTHS) {
      const page = await pageAt(w, alice.token);
      const nav = page.getByRole("navigation", { name: "Main" });
      const links = await nav.getByRole("link").evaluateAll((els) =>
        els.map((el) => {
          const r = el.getBoundingClientRect();
          return { text: (el.textContent ?? "").trim(), left: r.left, right: r.right };
        }),
      );
      t.ok(links.length >= 6, `${w.name}: ${links.length} links`);
      for (const l of links)
        t.ok(l.left >= 0 && l.right <= w.width, `${w.name}: ${l.text} in view (${l.left}-${l.right} of ${w.width})`);
      const scroll = await nav.evaluate((el) => el.scrollWidth - el.clientWidth);
      t.equal(scroll, 0, `${w.name}: the nav does not scroll sideways`);
      await shot(page, `first-hour-nav-${w.name}.png`);
      await page.context().close();
    }
  });

  t.test("the attachment picker shows sizes in bytes below 1 KB and a preview of a picture", async (t) => {
    for (const w of WIDTHS) {
      const page = await pageAt(w, alice.token);
      await page.goto(`${url}/#/chat/to/${bob.id}`);
      await page.getByLabel("Message", { exact: true }).waitFor(wait);
      await page.locator("#attach").setInputFiles([
        { name: "note.txt", mimeType: "text/plain", buffer: Buffer.from("twenty-six bytes of text!\n") },
        { name: "shot.png", mimeType: "image/png", buffer: png() },
      ]);
      const picked = page.getByRole("list", { name: "Files to send" });
      await picked.waitFor(wait);
      t.match(await picked.locator("li", { hasText: "note.txt" }).innerText(), /note\.txt\s*\(?26 B\)?/, "26 B");
      t.notMatch(await picked.innerText(), /1 KB/, "no 26-byte file read as 1 KB");
      const preview = picked.locator("li", { hasText: "shot.png" }).getByRole("img", { name: "shot.png" });
      await preview.waitFor(wait);
      t.equal(await preview.evaluate((i) => (i as HTMLImageElement).naturalWidth), 48, "the picture previewed");
      await shot(page, `first-hour-picker-${w.name}.png`);
      await page.getByLabel("Message", { exact: true }).fill(`two files (${w.name})`);
      await page.getByRole("button", { name: "Send" }).click();
      const sent = page.locator(".messages > li:last-child", { hasText: `two files (${w.name})` });
      await sent.getByRole("button", { name: /Download note\.txt/ }).waitFor(wait);
      t.equal(
        await sent.getByRole("button", { name: /Download note\.txt/ }).innerText(),
        "Download note.txt (26 B)",
        "a sent file's size in bytes too",
      );
      t.equal(await page.getByRole("list", { name: "Files to send" }).count(), 0, "the picker empties once sent");
      await page.context().close();
    }
  });

  t.test("a draft and picked files at /chat/to/<peer> stay when the thread list arrives after them", async (t) => {
    const page = await pageAt(WIDTHS[0], alice.token);
    // the list of conversations held back until the draft is written and the files picked
    let release!: () => void;
    const held = new Promise<void>((r) => (release = r));
    let asked = 0;
    await page.route(/\/v1\/threads(\?|$)/, async (route) => {
      asked++;
      await held;
      await route.continue();
    });
    await page.goto(`${url}/#/chat/to/${bob.id}`);
    await page.getByLabel("Message", { exact: true }).fill("a draft written early");
    await page
      .locator("#attach")
      .setInputFiles([{ name: "early.txt", mimeType: "text/plain", buffer: Buffer.from("early\n") }]);
    const picked = page.getByRole("list", { name: "Files to send" });
    await picked.waitFor(wait);
    await until(() => asked > 0, { ms: 15_000, what: "the thread list asked for" });
    release();
    // the thread was found (its history shown) and the conversation kept what was written meanwhile
    await page.getByRole("list", { name: "Messages" }).getByText("picture day 24", { exact: true }).waitFor(wait);
    await page.locator(".threads a[aria-current=true]").waitFor(wait);
    t.equal(await page.getByLabel("Message", { exact: true }).inputValue(), "a draft written early", "the draft kept");
    t.match(await picked.innerText(), /early\.txt/, "the picked file kept");
    await page.unroute(/\/v1\/threads(\?|$)/);
    await page.context().close();
  });

  t.test("an unknown page says so, with a link home", async (t) => {
    for (const w of WIDTHS) {
      const page = await pageAt(w, alice.token);
      await page.goto(`${url}/#/nope`);
      await page.getByRole("heading", { name: "Page not found" }).waitFor(wait);
      t.equal(await page.getByRole("heading", { name: "Feed" }).count(), 0, "not the feed");
      await shot(page, `first-hour-not-found-${w.name}.png`);
      await page.getByRole("link", { name: "Go to the feed" }).click();
      await page.getByRole("heading", { name: "Page not found" }).waitFor({ state: "detached", ...wait });
      t.equal(new URL(page.url()).hash, "#/feed", "the link goes home");
      await page.goto(`${url}/#/`);
      t.equal(await page.getByRole("heading", { name: "Page not found" }).count(), 0, "#/ is the feed");
      await page.context().close();
    }
  });

  t.test("a friend coming online turns green, and grey again on leaving", async (t) => {
    const dotOf = (page: Page, selector: string) =>
      page.evaluate((sel) => {
        const d = document.querySelector(sel);
        return d ? { label: d.getAttribute("aria-label"), colour: getComputedStyle(d).backgroundColor } : null;
      }, selector);
    const until = (page: Page, selector: string, label: string) =>
      page.waitForFunction(
        ([sel, l]) => document.querySelector(sel!)?.getAttribute("aria-label") === l,
        [selector, label],
        wait,
      );
    const friendDot = `[data-friend="${bob.id}"] .dot`;
    for (const w of WIDTHS) {
      const page = await pageAt(w, alice.token);
      await page.getByRole("link", { name: "Friends" }).click();
      await page.locator(friendDot).waitFor(wait);
      t.equal((await dotOf(page, friendDot))?.label, "offline", `${w.name}: bob not connected yet`);
      // bob connects while alice looks: his presence arrives live
      const socket = new WebSocket(`${url.replace(/^http/, "ws")}/v1/ws`, ["flock.json", `bearer.${bob.token}`]);
      await new Promise<void>((resolve, reject) => {
        socket.on("message", (d) => (JSON.parse(String(d)) as { type: string }).type === "ready" && resolve());
        socket.on("error", reject);
      });
      await until(page, friendDot, "online");
      t.same(await dotOf(page, friendDot), { label: "online", colour: "rgb(26, 127, 55)" }, `${w.name}: green`);
      await page.goto(`${url}/#/chat/to/${bob.id}`);
      await page.locator(".conv-head .dot").waitFor(wait);
      await until(page, ".conv-head .dot", "online");
      t.same(
        await dotOf(page, ".conv-head .dot"),
        { label: "online", colour: "rgb(26, 127, 55)" },
        `${w.name}: green in the conversation's header too`,
      );
      await shot(page, `first-hour-presence-${w.name}.png`);
      socket.close();
      await until(page, ".conv-head .dot", "offline");
      t.equal((await dotOf(page, ".conv-head .dot"))?.colour, "rgb(140, 149, 159)", `${w.name}: grey once he leaves`);
      await page.context().close();
    }
  });

  let oracle: Awaited<ReturnType<typeof paidAgent>> | undefined;
  t.test("a paid agent's network is named, on the agents page and in the conversation", async (t) => {
    oracle = await paidAgent(url, env.network, 0.05, "Harbour Oracle");
    for (const w of WIDTHS) {
      const page = await pageAt(w, alice.token);
      await page.getByRole("link", { name: "Agents" }).click();
      const card = page.locator(`[data-agent="${oracle.id}"]`);
      await card.getByText("$0.05").waitFor(wait);
      t.match(await card.innerText(), /Local test chain \(31337\)/, `${w.name}: the agents page names the network`);
      t.notMatch(await page.locator("main").innerText(), /eip155:/, `${w.name}: no CAIP-2 id shown`);
      await card.getByRole("link", { name: "Message" }).click();
      const price = page.locator(".price", { hasText: "$0.05" });
      await price.waitFor(wait);
      t.match(await price.innerText(), /Local test chain \(31337\)/, `${w.name}: so does the price line`);
      t.notMatch(await price.innerText(), /eip155:/);
      await shot(page, `first-hour-network-${w.name}.png`);
      await page.context().close();
    }
  });

  t.test("the payments page names the other side, on both sides", async (t) => {
    if (!oracle) throw new Error("the paid agent test did not run");
    const paying = new Flock({ baseUrl: url, token: alice.token, payments: new Payer({ account: payer }) });
    await paying.send(oracle.id, "Will it rain tomorrow?");
    for (const w of WIDTHS) {
      for (const [who, token, other] of [
        ["alice", alice.token, "Harbour Oracle"],
        ["oracle", oracle.token, alice.display_name],
      ] as const) {
        const page = await pageAt(w, token, who);
        await page.getByRole("link", { name: "Payments" }).click();
        const row = page.locator('[data-status="settled"]').first();
        await row.waitFor(wait);
        await row.getByText(other, { exact: true }).waitFor(wait);
        const text = await row.innerText();
        t.match(text, other, `${w.name} ${who}: names ${other}`);
        t.notMatch(text, /\b(P[0-9A-Za-z]{10,}|\d{6,})\b/, `${w.name} ${who}: no id in place of a name`);
        t.match(text, /Local test chain \(31337\)/, `${w.name} ${who}: and the network by name`);
        await shot(page, `first-hour-payments-${who}-${w.name}.png`);
        await page.context().close();
      }
    }
  });

  t.test("the SDK reference loads with no console error", async (t) => {
    for (const w of WIDTHS) {
      const ctx = await browser.newContext({ viewport: { width: w.width, height: w.height } });
      const page = await ctx.newPage();
      const found: string[] = [];
      page.on("console", (m) => m.type() === "error" && found.push(`${m.text()} (${m.location().url})`));
      page.on("pageerror", (e) => found.push(e.message));
      for (const path of ["/docs/sdk", "/docs/sdk/", "/docs/sdk/classes/index.Flock.html"]) {
        await page.goto(`${url}${path}`);
        await page.locator(".tsd-page-title, h1").first().waitFor(wait);
        await page.waitForLoadState("networkidle");
        t.ok(await page.locator("body").isVisible(), `${w.name} ${path}: the page shows`);
      }
      t.same(found, [], `${w.name}: no console error`);
      await shot(page, `first-hour-sdk-${w.name}.png`);
      await ctx.close();
    }
  });

  t.test("a banner during a rolling restart spans the page; the conversation keeps its width", async (t) => {
    // a node of its own, lingering 4 s on its way down: its last second answers every request 503
    const going = await startTestNode(t, { engine: "memory", env: { FLOCK_SHUTDOWN_LINGER: "4" } });
    const carol = await humanOverHttp(going.url);
    const dave = await registerAgent(going.url, "Dave");
    await befriend(going.url, carol, dave);
    const sent = await new Flock({ baseUrl: going.url, token: dave.token }).send(carol.id, "still here?");
    const pages: Page[] = [];
    for (const w of WIDTHS) {
      const ctx = await browser.newContext({ viewport: { width: w.width, height: w.height } });
      const page = await ctx.newPage();
      await signInWithToken(page, going.url, carol.token);
      await page.goto(`${going.url}/#/chat/to/${dave.id}`);
      await page.getByLabel("Message", { exact: true }).waitFor(wait);
      pages.push(page);
    }
    const closed = going.close({ linger: true });
    // wait for the refusing second, then open the conversation: the app's reload of the list gets the 503
    await until(
      async () =>
        (await fetch(`${going.url}/v1/threads`, { headers: { authorization: `Bearer ${carol.token}` } })).status ===
        503,
      { ms: 15_000, what: "the node refusing with 503" },
    );
    await Promise.all(pages.map((p) => p.evaluate((id) => (location.hash = `#/chat/t/${id}`), sent.thread_id)));
    for (const [i, w] of WIDTHS.entries()) {
      const page = pages[i]!;
      const banner = page.locator(".chat > .alert");
      await banner.waitFor(wait);
      t.match(await banner.innerText(), /shutting down|can't be reached/, `${w.name}: the banner shows`);
      const main = await box(page, "main");
      const b = await box(page, ".chat > .alert");
      const conv = await box(page, ".conversation");
      const composer = await box(page, "form.send");
      const phone = w.width < 600;
      t.ok(b.width >= main.width - 40, `${w.name}: the banner spans the page (${b.width} of ${main.width})`);
      t.ok(conv.top >= b.bottom, `${w.name}: above the conversation`);
      t.ok(
        conv.width >= (phone ? w.width - 40 : 560),
        `${w.name}: the conversation keeps its width (${conv.width} px)`,
      );
      t.ok(composer.width >= (phone ? w.width - 40 : 560), `${w.name}: so does the composer (${composer.width} px)`);
      await shot(page, `first-hour-restart-${w.name}.png`);
    }
    await closed;
    for (const p of pages) await p.context().close();
  });

  t.test("no console error on the way", async (t) => {
    const found = watchers.flat().filter((e) => !/status of 402/.test(e));
    t.same(found, [], "none");
  });
}
