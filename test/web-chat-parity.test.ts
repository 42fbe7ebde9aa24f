// The chat's everyday features in headless Debian chromium, on one node: Alice (two tabs) and Bob, each signed in
// through a test wallet. Unread badges on the conversation and the Chat link and the count in the tab title rise
// live and clear once the conversation is read, in the other tab too (the `read` frame); a browser notification for
// a message that arrives while the tab is hidden, once notifications are enabled; "Seen" under the sender's newest
// message the peer has read; an edit, a deletion, a reply and reactions seen live on the other side; the name once
// per run of messages, times on messages and in the list, the composer's character counter, "You: …" in the list;
// the message actions at phone width (375 px). Screenshots of each go to test-output/web/.
import t from "tap";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { call } from "./helpers/http.ts";
import { befriend } from "./helpers/social.ts";
import {
  hideableTabs,
  launch,
  NO_BROWSER,
  notificationsOf,
  type Page,
  setHidden,
  shot,
  signInWithWallet,
  walletContext,
  watchErrors,
  webNode,
} from "./helpers/web.ts";

const wait = { timeout: 15_000 };

const titleIs = (page: Page, title: string) => page.waitForFunction((want) => document.title === want, title, wait);

async function rename(url: string, token: string, display_name: string): Promise<void> {
  const r = await call(url, "PATCH", "/v1/users/me", { token, json: { display_name } });
  if (r.status !== 200) throw new Error(`rename failed: ${r.status} ${r.text}`);
}

if (NO_BROWSER) {
  t.plan(0, NO_BROWSER); // the whole file: reported as skipped, with the reason
} else {
  const url = await webNode(t);
  const browser = await launch();
  t.teardown(() => browser.close());
  const alice = await walletContext(browser, privateKeyToAccount(generatePrivateKey()));
  const bob = await walletContext(browser, privateKeyToAccount(generatePrivateKey()));
  await hideableTabs(alice.ctx, url);
  const pa = await alice.ctx.newPage();
  const pb = await bob.ctx.newPage();
  const ea = watchErrors(pa, "alice");
  const eb = watchErrors(pb, "bob");
  const a = { ...(await signInWithWallet(pa, url)), display_name: "Alice" };
  const b = { ...(await signInWithWallet(pb, url)), display_name: "Bob" };
  await rename(url, a.token, "Alice");
  await rename(url, b.token, "Bob");
  await befriend(url, a, b);
  // Alice's second tab: the same session, from localStorage
  const pa2 = await alice.ctx.newPage();
  const ea2 = watchErrors(pa2, "alice's second tab");
  await pa2.goto(`${url}/#/feed`);
  for (const p of [pa, pa2, pb]) await p.locator('[data-live="online"]').waitFor(wait);
  const other: string[] = [];

  let threadId = "";
  const inA = (id: string) => pa.locator(`[data-message="${id}"]`);
  const inB = (id: string) => pb.locator(`[data-message="${id}"]`);
  const idOf = async (p: Page, text: string) =>
    (await p.locator("[data-message]", { hasText: text }).last().getAttribute("data-message")) ?? "";

  async function bobSends(text: string): Promise<string> {
    await pb.getByLabel("Message", { exact: true }).fill(text);
    await pb.getByRole("button", { name: "Send", exact: true }).click();
    await pb.locator(".msg.mine", { hasText: text }).waitFor(wait);
    return idOf(pb, text);
  }

  t.test("unread badges and the tab title rise live and clear once read, in both tabs", async (t) => {
    await pa.goto(`${url}/#/chat`);
    await pa.getByRole("heading", { name: "Conversations" }).waitFor(wait);
    await pb.goto(`${url}/#/chat/to/${a.id}`);
    await bobSends("Hello Alice");
    await pb.waitForURL(/#\/chat\/t\/thread_/, wait);
    threadId = pb.url().split("/").pop()!;
    // the conversation, now under its thread (and named after its peer), is the one to write in
    await pb.getByRole("region", { name: "Conversation with Alice" }).waitFor(wait);
    await bobSends("Are you there?");

    const row = pa.locator(`[data-thread="${threadId}"]`);
    await row.locator('[data-unread="2"]').waitFor(wait);
    await pa.locator('nav [data-unread-total="2"]').waitFor(wait);
    await titleIs(pa, "(2) Flock");
    t.equal(await pa.getByRole("link", { name: "Chat 2 unread" }).count(), 1, "the Chat link reads out its count");
    t.equal(
      await row.locator(".last").innerText(),
      "Bob: Are you there?",
      "the list shows the last message with its sender",
    );
    t.equal(await row.locator("time").count(), 1, "and its time");
    await pa2.locator('nav [data-unread-total="2"]').waitFor(wait);
    await titleIs(pa2, "(2) Flock");
    t.pass("two unread: on the conversation, the Chat link and the title, in both of Alice's tabs");
    await shot(pa, "chat-unread.png");

    const reads = pa.waitForResponse(
      (r) => r.request().method() === "POST" && r.url().endsWith(`/v1/threads/${threadId}/read`),
      wait,
    );
    await row.click();
    await inA(await idOf(pb, "Are you there?")).waitFor(wait);
    const read = await reads;
    t.equal(read.status(), 200, "opening the conversation marks it read");
    t.equal(
      (read.request().postDataJSON() as { through: string }).through,
      await idOf(pb, "Are you there?"),
      "through its newest message",
    );
    await row.locator("[data-unread]").waitFor({ state: "detached", ...wait });
    await pa.locator("nav [data-unread-total]").waitFor({ state: "detached", ...wait });
    await titleIs(pa, "Flock");
    await pa2.locator("nav [data-unread-total]").waitFor({ state: "detached", ...wait });
    await titleIs(pa2, "Flock");
    t.pass("the badges and the title count clear, in the other tab too");

    const threads = await call<{ threads: { id: string; unread_count: number }[]; unread_total: number }>(
      url,
      "GET",
      "/v1/threads",
      { token: a.token },
    );
    t.equal(threads.body.unread_total, 0, "the server agrees: nothing unread");
  });

  t.test("Bob sees Seen under his newest message Alice has read", async (t) => {
    const newest = inB(await idOf(pb, "Are you there?"));
    await newest.locator("[data-seen]").waitFor(wait);
    t.equal(await pb.locator("[data-seen]").count(), 1, "once, under the newest message read");
    t.equal(await newest.locator("[data-seen]").innerText(), "Seen");
    await shot(pb, "chat-seen.png");
  });

  t.test("a notification while the tab is hidden, once notifications are enabled", async (t) => {
    const before = await notificationsOf(pa);
    await pa.getByRole("button", { name: "Enable notifications" }).click();
    await pa.getByRole("button", { name: "Turn off notifications" }).waitFor(wait);
    t.equal((await notificationsOf(pa)).asked, before.asked + 1, "the button asked the browser's permission");
    await shot(pa, "chat-notifications-on.png");

    await setHidden(pa, true);
    const id = await bobSends("Ping while you are away");
    await pa.waitForFunction(
      () => (window as unknown as { __notifications: unknown[] }).__notifications.length > 0,
      undefined,
      wait,
    );
    const { shown } = await notificationsOf(pa);
    t.same(
      shown,
      [{ title: "Bob", body: "Ping while you are away", tag: id }],
      "one notification, from Bob, with the message",
    );
    // the conversation is open but hidden: not read yet
    await pa.locator('nav [data-unread-total="1"]').waitFor(wait);
    await titleIs(pa, "(1) Flock");
    await titleIs(pa2, "(1) Flock");
    t.same((await notificationsOf(pa2)).shown, [], "the visible tab shows none");
    t.equal(await inB(id).locator("[data-seen]").count(), 0, "not seen while Alice's tab is hidden");

    await setHidden(pa, false);
    await titleIs(pa, "Flock");
    await titleIs(pa2, "Flock");
    await inB(id).locator("[data-seen]").waitFor(wait);
    t.pass("shown again: read, the badges clear in both tabs and Bob's Seen moves to the new message");
  });

  t.test("an edit, a reply, reactions and a deletion, seen live on the other side", async (t) => {
    // edit: inline, saved with Enter
    const lunch = await bobSends("Lunch at noon?");
    await inA(lunch).waitFor(wait);
    await inB(lunch).getByRole("button", { name: "Edit" }).click();
    const box = pb.getByRole("textbox", { name: "Edit message" });
    t.equal(await box.inputValue(), "Lunch at noon?", "the edit box holds the message");
    await box.fill("Lunch at one?");
    await box.press("Enter");
    await inB(lunch).getByText("(edited)").waitFor(wait);
    await inA(lunch).getByText("(edited)").waitFor(wait);
    t.equal(await inA(lunch).locator("p").innerText(), "Lunch at one?", "Alice sees the new text live");
    const stored = await call<{
      messages: { id: string; body: string; edited_at?: string; reply_to?: { id: string } }[];
    }>(url, "GET", `/v1/threads/${threadId}/messages`, { token: a.token });
    t.ok(stored.body.messages.find((m) => m.id === lunch)?.edited_at, "stored as edited");

    // reply: the quote above the composer, then above the reply on both sides
    await inA(lunch).getByRole("button", { name: "Reply" }).click();
    await pa.locator(`[data-replying="${lunch}"]`).getByText("Lunch at one?").waitFor(wait);
    t.equal(await pa.evaluate(() => document.activeElement?.id), "message", "the composer takes the focus");
    await pa.getByLabel("Message", { exact: true }).fill("One works");
    await shot(pa, "chat-reply.png");
    await pa.getByRole("button", { name: "Send", exact: true }).click();
    await pa.locator(".msg.mine", { hasText: "One works" }).waitFor(wait);
    t.equal(await pa.locator("[data-replying]").count(), 0, "the quote leaves the composer once sent");
    const reply = await idOf(pa, "One works");
    await inB(reply).locator(`[data-quote="${lunch}"]`).getByText("Lunch at one?").waitFor(wait);
    const again = await call<{ messages: { id: string; reply_to?: { id: string } }[] }>(
      url,
      "GET",
      `/v1/threads/${threadId}/messages`,
      { token: b.token },
    );
    t.equal(again.body.messages.find((m) => m.id === reply)?.reply_to?.id, lunch, "sent with reply_to");
    await pa.locator(`[data-thread="${threadId}"] .last`).getByText("You: One works").waitFor(wait);
    t.pass("the list says You: for Alice's own last message");

    // reactions: Alice 👍, Bob too, then Alice takes hers back
    await inA(lunch).getByRole("button", { name: "React", exact: true }).click();
    await inA(lunch).getByRole("button", { name: "React with 👍" }).click();
    await inB(lunch).locator('[data-reaction="👍"]').getByText("👍 1").waitFor(wait);
    t.equal(await inB(lunch).locator('[data-reaction="👍"]').getAttribute("aria-pressed"), "false", "not Bob's");
    await inB(lunch).locator('[data-reaction="👍"]').click();
    await inA(lunch).locator('[data-reaction="👍"]').getByText("👍 2").waitFor(wait);
    await inB(lunch).locator('[data-reaction="👍"][aria-pressed="true"]').getByText("👍 2").waitFor(wait);
    await shot(pb, "chat-reactions.png");
    await inA(lunch).locator('[data-reaction="👍"]').click();
    await inB(lunch).locator('[data-reaction="👍"]').getByText("👍 1").waitFor(wait);
    t.pass("reactions count and toggle live on both sides");

    // delete: after a confirm, a tombstone on both sides and in the list
    const oops = await bobSends("Oops, wrong chat");
    await inA(oops).waitFor(wait);
    pb.once("dialog", (d) => void d.accept());
    await inB(oops).getByRole("button", { name: "Delete" }).click();
    await inA(oops).getByText("Message deleted").waitFor(wait);
    await inB(oops).getByText("Message deleted").waitFor(wait);
    t.equal(await inA(oops).getByText("Oops, wrong chat").count(), 0, "the text is gone");
    t.equal(await inA(oops).getByRole("button").count(), 0, "no actions on a tombstone");
    await pa.locator(`[data-thread="${threadId}"] .last`).getByText("Bob: Message deleted").waitFor(wait);
    await shot(pa, "chat-edit-delete.png");
  });

  t.test("runs of messages, times, and the composer's character counter", async (t) => {
    const first = inA(await idOf(pa, "Hello Alice"));
    const second = inA(await idOf(pa, "Are you there?"));
    t.equal(await first.locator(".from:not(.sr-only)").innerText(), "Bob", "the name opens Bob's run");
    t.equal(await second.locator(".from.sr-only").count(), 1, "and is only read out after that");
    t.equal(await second.locator("time").count(), 1, "every message has its time");
    const composer = pa.getByLabel("Message", { exact: true });
    await composer.fill("hello 👍");
    await pa.locator('#message-count[data-count="7"]').waitFor(wait);
    t.match(await pa.locator("#message-count").innerText(), /^7 \/ 8000/, "characters, not UTF-16 units");
    await composer.fill("x".repeat(8001));
    await pa.locator("#message-count.over").waitFor(wait);
    t.ok(await pa.getByRole("button", { name: "Send", exact: true }).isDisabled(), "over 8,000: cannot send");
    await composer.fill("");
  });

  t.test("the message actions at phone width", async (t) => {
    const phone = await browser.newContext({ viewport: { width: 375, height: 812 }, isMobile: true, hasTouch: true });
    t.teardown(() => phone.close());
    const session = { api: url, token: b.token, kind: "human", me: { id: b.id, display_name: "Bob" } };
    await phone.addInitScript(`localStorage.setItem("flock.session", ${JSON.stringify(JSON.stringify(session))})`);
    const pp = await phone.newPage();
    const ep = watchErrors(pp, "phone");
    await pp.goto(`${url}/#/chat/t/${threadId}`);
    const lunch = pp.locator("[data-message]", { hasText: "Lunch at one?" }).first();
    await lunch.waitFor(wait);
    await lunch.getByRole("button", { name: "React", exact: true }).click();
    await lunch.getByRole("button", { name: "React with 🎉" }).waitFor(wait);
    await pp.locator("[data-message]", { hasText: "One works" }).getByRole("button", { name: "Reply" }).click();
    await pp.locator("[data-replying]").waitFor(wait);
    const { scroll, width } = await pp.evaluate(() => ({
      scroll: document.documentElement.scrollWidth,
      width: innerWidth,
    }));
    t.equal(width, 375);
    t.ok(scroll <= 375, `no horizontal scroll at 375 px (scrollWidth ${scroll})`);
    await shot(pp, "phone-chat-actions.png");
    other.push(...ep.errors);
  });

  t.test("no console or page error", async (t) => {
    t.same([...ea.errors, ...ea2.errors, ...eb.errors, ...other], []);
  });
}
