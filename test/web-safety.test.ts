// Trust and safety in the web app (issue 53), in headless Debian chromium on one node whose FLOCK_MODERATORS names a
// moderator: a person blocks someone from a moment's menu and that one's moment leaves the feed (and stays out after
// a reload; the Friends page lists them as blocked, and unblocks); mutes someone likewise; reports a moment and a message
// from the UI, each reaching the moderators' queue with its reason; mutes a conversation from its header. The
// moderator sees the Moderation link, the reports on the page, suspends the reported message's sender and the audit
// log on the page shows it (the sender's token is refused); removes a reported moment from the page. A non-moderator sees no Moderation link and
// `#/moderation` shows nothing of the queue. Every control has a name; at 375 px the moderator page does not scroll
// sideways (screenshot test-output/web/moderation.png). No console errors.
import t from "tap";
import { buildWeb } from "../web/build.mjs";
import { call, registerAgent } from "./helpers/http.ts";
import { signInWithWallet as humanOverHttp } from "./helpers/humans.ts";
import { startTestNode } from "./helpers/node.ts";
import { befriend, post } from "./helpers/social.ts";
import {
  launch,
  NO_BROWSER,
  pageWidths,
  shot,
  signInWithToken,
  unnamedControls as unnamed,
  watchErrors,
} from "./helpers/web.ts";

const wait = { timeout: 15_000 };

interface Queued {
  id: string;
  target: string;
  target_id: string;
  target_owner: string;
  reporter: string;
  reason: string;
}

if (NO_BROWSER) {
  t.plan(0, NO_BROWSER); // the whole file: reported as skipped, with the reason
} else {
  await buildWeb();
  // the moderator registers first, so the node that serves the test can name it in FLOCK_MODERATORS
  const first = await startTestNode(t, { engine: "memory" });
  const mod = await registerAgent(first.url, "Warden");
  const node = await startTestNode(t, {
    engine: "memory",
    schema: first.schema,
    env: { FLOCK_MODERATORS: mod.id },
  });
  const url = node.url;
  const browser = await launch();
  t.teardown(() => browser.close());
  const alice = await humanOverHttp(url);
  const bob = await registerAgent(url, "Bob");
  const pest = await registerAgent(url, "Pest");
  const loud = await registerAgent(url, "Loud");
  await befriend(url, alice, bob);
  const errors: string[] = [];
  const queue = async () =>
    ((await call(url, "GET", "/v1/moderation/reports?limit=100", { token: mod.token })).body as { reports: Queued[] })
      .reports;

  const ctx = await browser.newContext({ viewport: { width: 1100, height: 800 } });
  const pa = await ctx.newPage();
  pa.on("dialog", (d) => void d.accept()); // the confirms (block) are accepted
  const ea = watchErrors(pa, "alice");
  const feed = pa.getByRole("list", { name: "Moments, newest first" });

  const pestMoment = await post(url, pest, "public", "pest: buy my course");
  const loudMoment = await post(url, loud, "public", "loud: LOOK AT ME");
  const bobMoment = await post(url, bob, "friends", "bob: a rude moment");
  await signInWithToken(pa, url, alice.token);

  t.test("a person blocks another from a moment's menu: the moment leaves the feed", async (t) => {
    const card = feed.locator(`[data-moment="${pestMoment.id}"]`);
    await card.waitFor(wait);
    await card.getByRole("button", { name: "More for Pest" }).click();
    t.same(await unnamed(pa), [], "every control of the feed with a person's menu open has a name");
    await card
      .getByRole("group", { name: "Actions for Pest" })
      .getByRole("button", { name: "Block", exact: true })
      .click();
    await card.waitFor({ state: "detached", ...wait });
    const blocks = await call(url, "GET", "/v1/blocks", { token: alice.token });
    t.same(
      (blocks.body as { blocks: { principal: { id: string } }[] }).blocks.map((b) => b.principal.id),
      [pest.id],
      "the server holds the block",
    );
    await pa.reload();
    await feed.locator(`[data-moment="${bobMoment.id}"]`).waitFor(wait);
    t.equal(await feed.locator(`[data-moment="${pestMoment.id}"]`).count(), 0, "still gone after a reload");

    // the Friends page lists whom I blocked (search leaves them out), shown as blocked; Unblock from there
    await pa.getByRole("link", { name: "Friends" }).click();
    const blocked = pa.getByRole("list", { name: "Blocked" });
    const badge = blocked.locator(`[data-blocked="${pest.id}"]`);
    await badge.waitFor(wait);
    t.equal(await badge.innerText(), "Blocked", "a blocked person is shown as such");
    await blocked.getByRole("button", { name: "More for Pest" }).click();
    t.same(await unnamed(pa), [], "every control of the Friends page with a menu open has a name");
    await blocked.getByRole("button", { name: "Unblock", exact: true }).click();
    await blocked.waitFor({ state: "detached", ...wait });
    const after = await call(url, "GET", "/v1/blocks", { token: alice.token });
    t.same((after.body as { blocks: unknown[] }).blocks, [], "unblocked on the server");
  });

  t.test("a person mutes another: the moment leaves the feed, silently", async (t) => {
    await pa.getByRole("link", { name: "Feed" }).click();
    const card = feed.locator(`[data-moment="${loudMoment.id}"]`);
    await card.waitFor(wait);
    await card.getByRole("button", { name: "More for Loud" }).click();
    await card.getByRole("button", { name: "Mute", exact: true }).click();
    await card.waitFor({ state: "detached", ...wait });
    const mutes = await call(url, "GET", "/v1/mutes", { token: alice.token });
    t.same(
      (mutes.body as { mutes: { principal: { id: string } }[] }).mutes.map((b) => b.principal.id),
      [loud.id],
      "the server holds the mute",
    );
    const loudFeed = await call(url, "GET", "/v1/moments/feed", { token: alice.token });
    t.notOk(
      (loudFeed.body as { moments: { id: string }[] }).moments.some((m) => m.id === loudMoment.id),
      "the server's feed leaves it out too",
    );
    await pa.reload();
    await feed.locator(`[data-moment="${bobMoment.id}"]`).waitFor(wait);
    t.equal(await feed.locator(`[data-moment="${loudMoment.id}"]`).count(), 0, "still gone after a reload");
  });

  t.test("reporting a moment from the UI reaches the queue with its reason", async (t) => {
    const card = feed.locator(`[data-moment="${bobMoment.id}"]`);
    await card.getByRole("button", { name: "Report this moment" }).click();
    const form = card.getByRole("form", { name: "Report this moment" });
    // the form renders, then its effect focuses the picker: wait for both (on a busy machine they come a frame later)
    await form.waitFor(wait);
    await pa.waitForFunction(() => document.activeElement?.tagName === "SELECT", undefined, wait).catch(() => {});
    t.equal(await pa.evaluate(() => document.activeElement?.tagName), "SELECT", "the reason picker takes the focus");
    await form.getByLabel("Reason").selectOption("harassment");
    await form.getByRole("button", { name: "Send report" }).click();
    await card.locator(`[data-reported="${bobMoment.id}"]`).waitFor(wait);
    const found = (await queue()).find((r) => r.target_id === bobMoment.id);
    t.match(found, { target: "moment", reporter: alice.id, reason: "harassment", target_owner: bob.id });
  });

  let spamMessage = "";
  t.test("reporting a message from the UI reaches the queue; the conversation mutes from its header", async (t) => {
    const sent = await call(url, "POST", "/v1/messages", {
      token: bob.token,
      json: { to: alice.id, body: "send me your seed phrase" },
    });
    t.equal(sent.status, 201);
    const { id, thread_id } = sent.body as { id: string; thread_id: string };
    spamMessage = id;
    await pa.goto(`${url}/#/chat/t/${thread_id}`);
    const msg = pa.locator(`[data-message="${id}"]`);
    await msg.waitFor(wait);
    t.equal(
      await pa
        .locator(".msg.mine")
        .getByRole("button", { name: /^Report/ })
        .count(),
      0,
      "none on my own",
    );
    await msg.getByRole("button", { name: "Report this message" }).click();
    await msg.getByLabel("Reason").selectOption("spam");
    await msg.getByRole("button", { name: "Send report" }).click();
    await msg.locator(`[data-reported="${id}"]`).waitFor(wait);
    const found = (await queue()).find((r) => r.target_id === id);
    t.match(found, { target: "message", reporter: alice.id, reason: "spam", target_owner: bob.id });

    const head = pa.locator(".conv-head");
    await head.getByRole("button", { name: "Mute conversation" }).click();
    await head.getByRole("button", { name: "Unmute conversation" }).waitFor(wait);
    const threads = await call(url, "GET", "/v1/threads", { token: alice.token });
    const thread = (threads.body as { threads: { id: string; muted: boolean }[] }).threads.find(
      (x) => x.id === thread_id,
    );
    t.equal(thread?.muted, true, "the server holds the conversation's mute");
    await pa.locator(`[data-thread="${thread_id}"] [data-muted-thread]`).waitFor(wait); // marked in the list
    t.same(await unnamed(pa), [], "every control of the conversation has a name");
  });

  t.test("a non-moderator has no Moderation link, and #/moderation shows nothing of the queue", async (t) => {
    await pa.goto(`${url}/#/feed`);
    await feed.locator(`[data-moment="${bobMoment.id}"]`).waitFor(wait);
    const nav = pa.getByRole("navigation", { name: "Main" });
    t.equal(await nav.getByRole("link", { name: "Moderation" }).count(), 0, "no link");
    await pa.goto(`${url}/#/moderation`);
    await pa.getByRole("heading", { name: "Not found" }).waitFor(wait);
    const text = await pa.locator("main").innerText();
    t.notMatch(text, /seed phrase|rude moment|Reported by|Audit/, "no report, no audit log");
    t.equal(await pa.locator("[data-report]").count(), 0);
    errors.push(...ea.errors);
  });

  t.test("the moderator sees the reports, suspends the sender, and the audit log shows it", async (t) => {
    const mctx = await browser.newContext({ viewport: { width: 1100, height: 800 } });
    t.teardown(() => mctx.close());
    const pm = await mctx.newPage();
    pm.on("dialog", (d) => void d.accept());
    const em = watchErrors(pm, "moderator");
    await signInWithToken(pm, url, mod.token);
    const link = pm.getByRole("navigation", { name: "Main" }).getByRole("link", { name: "Moderation" });
    await link.click();
    await pm.getByRole("heading", { name: "Moderation" }).waitFor(wait);
    const reports = pm.getByRole("list", { name: "Reports" });
    const item = reports.locator(`[data-target="${spamMessage}"]`);
    await item.waitFor(wait);
    t.match(await item.innerText(), /send me your seed phrase/, "the reported message's text");
    t.match(await item.innerText(), /Spam/, "its reason");
    t.match(await reports.locator(`[data-target="${bobMoment.id}"]`).innerText(), /a rude moment[\s\S]*Harassment/);
    t.same(await unnamed(pm), [], "every control of the moderator page has a name");
    // the rest at phone width
    await pm.setViewportSize({ width: 375, height: 800 });
    const wide = () => pageWidths(pm);
    const before = await wide();
    t.ok(before.scroll <= before.width, `the queue does not scroll sideways at 375 px (${before.scroll} px)`);
    await shot(pm, "moderation.png");

    // Remove on the reported moment: gone as its author's delete, and in the audit log
    const momentItem = reports.locator(`[data-target="${bobMoment.id}"]`);
    await momentItem.getByLabel("Reason for the action").fill("rude");
    await momentItem.getByRole("button", { name: "Remove moment" }).click();
    await pm
      .getByRole("list", { name: "Audit log" })
      .locator(`[data-audit="remove"][data-target="${bobMoment.id}"]`)
      .waitFor(wait);
    const gone = await call(url, "GET", `/v1/moments/${bobMoment.id}`, { token: alice.token });
    t.equal(gone.status, 404, "the removed moment is gone");

    await item.getByLabel("Reason for the action").fill("phishing for seed phrases");
    await item.getByRole("button", { name: "Suspend owner" }).click();
    await pm.getByRole("status").getByText("Suspended.").waitFor(wait);
    const entry = pm
      .getByRole("list", { name: "Audit log" })
      .locator(`[data-audit="suspend"][data-target="${bob.id}"]`);
    await entry.waitFor(wait);
    t.match(await entry.innerText(), /phishing for seed phrases/, "the audit log on the page shows it, with why");
    const refused = await call(url, "GET", "/v1/agents/me", { token: bob.token });
    t.equal(refused.status, 403, "the suspended sender's token is refused");
    t.equal(await reports.locator(`[data-target="${spamMessage}"]`).count(), 0, "its reports are closed");

    const after = await wide();
    t.ok(after.scroll <= after.width, `nor the audit log (${after.scroll} px)`);
    errors.push(...em.errors);
  });

  t.test("no console errors", async (t) => {
    t.same(errors, []);
  });
}
