// Search and live lists in headless Debian chromium, on one node: Alice and Bob in the browser (signed in with their
// tokens), Carol and Dave over HTTP only, strangers to both. Friend requests arrive and are accepted live on the
// friends page; people search finds a friend by name and offers a pasted id, never a stranger; message search finds
// a message of one's own conversations and opens it, never a stranger's; the feed shows "N new moments" without a
// Refresh button; the "can't be reached" banner clears by itself once Flock answers again, and a search that failed
// offline runs again by itself; "Seen by" under one's newest message in a group; a picture chosen on the profile page
// shows on the other side; a friend request to a hidden tab shows a notification and a badge on the Friends link.
// Keyboard, named controls and 375 px width are checked on the new screens. Screenshots go to test-output/web/.
import t from "tap";
import { call } from "./helpers/http.ts";
import { signInWithWallet as humanOverHttp, rename } from "./helpers/humans.ts";
import { befriend } from "./helpers/social.ts";
import {
  hideableTabs,
  launch,
  NO_BROWSER,
  notificationsOf,
  pageWidths,
  png,
  setHidden,
  shot,
  signInLive,
  unnamedControls,
  watchErrors,
  webNode,
} from "./helpers/web.ts";

const wait = { timeout: 15_000 };

if (NO_BROWSER) {
  t.plan(0, NO_BROWSER); // the whole file: reported as skipped, with the reason
} else {
  const url = await webNode(t);
  const alice = await rename(url, await humanOverHttp(url), "Alice");
  const bob = await rename(url, await humanOverHttp(url), "Bob");
  const carol = await rename(url, await humanOverHttp(url), "Carol");
  const dave = await rename(url, await humanOverHttp(url), "Dave");
  await befriend(url, carol, dave);
  const secret = await call(url, "POST", "/v1/messages", {
    token: carol.token,
    json: { to: dave.id, body: "the pelican nests under pier nine" },
  });
  if (secret.status !== 201) throw new Error(`carol's message to dave: ${secret.status} ${secret.text}`);

  const browser = await launch();
  t.teardown(() => browser.close());
  const actx = await browser.newContext({ viewport: { width: 1100, height: 800 } });
  const bctx = await browser.newContext({ viewport: { width: 1100, height: 800 } });
  await hideableTabs(bctx, url);
  const pa = await actx.newPage();
  const pb = await bctx.newPage();
  const ea = watchErrors(pa, "alice");
  const eb = watchErrors(pb, "bob");
  await signInLive(pa, url, alice.token);
  await signInLive(pb, url, bob.token);
  let groupThread = "";

  t.test("a friend request arrives live, and its acceptance reaches the sender live", async (t) => {
    await pa.getByRole("link", { name: "Friends" }).click();
    await pb.getByRole("link", { name: "Friends" }).click();
    await pb.getByRole("heading", { name: "Friends", exact: true }).waitFor(wait);
    // Bob is a stranger to Alice: search by name finds no one, his pasted id is offered
    await pa.getByLabel("Find people").fill("Bob");
    await pa.getByText(/No one found for “Bob”/).waitFor(wait);
    await pa.getByLabel("Find people").fill(bob.id);
    await pa
      .locator(`[data-person="${bob.id}"]`)
      .getByRole("button", { name: /^Add .* as a friend$/ })
      .click();
    await pa.getByRole("list", { name: "Outgoing requests" }).locator(`[data-name-of="${bob.id}"]`).waitFor(wait);

    // Bob's page hears it without a reload, under Alice's name (from the live frame), not her id
    const incoming = pb.getByRole("list", { name: "Incoming requests" });
    await incoming.getByText("Alice").waitFor(wait);
    t.equal(await incoming.getByText(alice.id).count(), 0, "the request shows a name, not an id");
    await shot(pb, "friends-request-live.png");
    await pb.locator('nav [data-requests="1"]').waitFor(wait);
    t.equal(
      await pb.getByRole("link", { name: "Friends 1 request" }).count(),
      1,
      "the Friends link reads out the waiting request",
    );
    await incoming.getByRole("button", { name: "Accept", exact: true }).click();
    await pb.locator(`[data-friend="${alice.id}"]`).waitFor(wait);
    await pb.locator("nav [data-requests]").waitFor({ state: "detached", ...wait });
    // Alice's list gets Bob without a reload (Bob, online, is announced to his new friend)
    await pa.locator(`[data-friend="${bob.id}"][data-online="yes"]`).waitFor(wait);
    t.equal(await pa.getByRole("list", { name: "Outgoing requests" }).count(), 0, "the request is no longer pending");
    await shot(pa, "friends-accepted-live.png");
  });

  t.test("people search finds a friend by name, never a stranger; a new conversation picks a person", async (t) => {
    await pa.getByLabel("Find people").fill("bo");
    const found = pa.getByRole("list", { name: "People found" });
    await found
      .locator(`[data-person="${bob.id}"]`, { hasText: "Bob" })
      .getByText("friend", { exact: true })
      .waitFor(wait);
    t.pass("Bob found by part of his name, marked as a friend");
    await shot(pa, "search-people.png");
    await pa.setViewportSize({ width: 375, height: 740 });
    const w = await pageWidths(pa);
    t.ok(w.scroll <= w.width, `no horizontal scroll at 375 px (${w.scroll} <= ${w.width})`);
    t.same(await unnamedControls(pa), [], "every control of the friends page with results has a name");
    await shot(pa, "search-people-375.png");
    await pa.setViewportSize({ width: 1100, height: 800 });
    await pa.getByLabel("Find people").fill("Carol");
    await pa.getByText(/No one found for “Carol”/).waitFor(wait);
    t.pass("Carol, who Alice does not know, is not found");

    await pa.getByRole("link", { name: "Chat" }).click();
    await pa.getByRole("button", { name: "New message" }).click();
    await pa.getByLabel("Message someone").fill("Bob");
    const pick = pa.getByRole("list", { name: "People found" }).getByRole("link", { name: "Message Bob" });
    await pick.waitFor(wait);
    await shot(pa, "new-message.png");
    // the keyboard: from the search box, Tab reaches the result's Message link
    await pa.getByLabel("Message someone").focus();
    for (let i = 0; i < 5 && !(await pick.evaluate((el) => el === document.activeElement)); i++)
      await pa.keyboard.press("Tab");
    await pa.keyboard.press("Enter");
    await pa.getByRole("region", { name: "Conversation with Bob" }).waitFor(wait);
    await pa.getByLabel("Message", { exact: true }).fill("Did you see the pelican at the harbour?");
    await pa.getByRole("button", { name: "Send", exact: true }).click();
    await pa.waitForURL(/#\/chat\/t\/thread_/, wait);
    t.pass("a conversation started from a person found by name");
  });

  t.test("message search finds one's own conversations' messages and opens them, never a stranger's", async (t) => {
    const threadId = pa.url().split("/").pop()!;
    await pb.getByRole("link", { name: "Chat" }).click();
    await pb.getByLabel("Search messages").fill("pelican");
    await pb.getByLabel("Search messages").press("Enter");
    const found = pb.getByRole("region", { name: "Messages found" });
    await found.locator("[data-found]").first().waitFor(wait);
    t.equal(await found.locator("[data-found]").count(), 1, "one message: Alice's, not Carol's to Dave");
    t.match(await found.innerText(), /Did you see the pelican/);
    t.notMatch(await found.innerText(), /pier nine/, "a stranger's message is not found");
    await shot(pb, "search-messages.png");
    await found.locator("[data-found]").first().click();
    await pb.waitForURL(new RegExp(`#/chat/t/${threadId}$`), wait);
    await pb.getByRole("list", { name: "Messages" }).getByText("Did you see the pelican").waitFor(wait);

    // at phone width, with results shown: no sideways scroll, every control named
    await pb.goto(`${url}/#/chat`);
    await pb.setViewportSize({ width: 375, height: 740 });
    await pb.getByLabel("Search messages").fill("harbour");
    await pb.keyboard.press("Enter");
    await pb.getByRole("region", { name: "Messages found" }).locator("[data-found]").first().waitFor(wait);
    const w = await pb.evaluate(() => ({ scroll: document.documentElement.scrollWidth, width: innerWidth }));
    t.ok(w.scroll <= w.width, `no horizontal scroll at 375 px (${w.scroll} <= ${w.width})`);
    t.same(await unnamedControls(pb), [], "every control of the chat list with results has a name");
    await shot(pb, "search-messages-375.png");
    // the keyboard: Escape clears the search, Tab reaches the result's conversation
    await pb.getByLabel("Search messages").press("Escape");
    t.equal(await pb.getByRole("region", { name: "Messages found" }).count(), 0, "Escape clears the results");
    await pb.setViewportSize({ width: 1100, height: 800 });
  });

  t.test("the feed shows new moments without Refresh", async (t) => {
    // a page whose clock the test may move: the feed checks every 30 s
    const pf = await actx.newPage();
    const ef = watchErrors(pf, "alice's feed");
    await pf.clock.install();
    await pf.goto(`${url}/#/feed`);
    await pf.locator('[data-live="online"]').waitFor(wait);
    await pf.getByText("Nothing here yet").waitFor(wait);
    const first = await call(url, "POST", "/v1/moments", {
      token: bob.token,
      json: { content: "First light on the water", visibility: "friends" },
    });
    t.equal(first.status, 201);
    await pf.clock.fastForward(31_000);
    // nothing shown yet: the first moment comes straight in
    await pf.locator("[data-moment]", { hasText: "First light on the water" }).waitFor(wait);
    for (const content of ["Gulls over the breakwater", "Fog rolling in"]) {
      const r = await call(url, "POST", "/v1/moments", { token: bob.token, json: { content, visibility: "friends" } });
      t.equal(r.status, 201);
    }
    await pf.clock.fastForward(31_000);
    const pill = pf.getByRole("button", { name: "2 new moments" });
    await pill.waitFor(wait);
    t.equal(
      await pf.locator("[data-moment]", { hasText: "Fog rolling in" }).count(),
      0,
      "new moments wait behind the button",
    );
    await shot(pf, "feed-new-moments.png");
    await pill.press("Enter");
    await pf.locator("[data-moment]", { hasText: "Fog rolling in" }).waitFor(wait);
    t.equal(await pf.locator("[data-moment]").count(), 3, "all three shown, newest first");
    t.equal(await pf.getByRole("button", { name: /new moment/ }).count(), 0, "the button is gone");
    t.same(ef.errors, []);
    await pf.close();
  });

  t.test("the can't-be-reached banner clears once Flock answers again", async (t) => {
    await pa.goto(`${url}/#/feed`);
    const moment = pa.locator("[data-moment]", { hasText: "Fog rolling in" });
    await moment.waitFor(wait);
    // no answer from Flock for any request (the live connection stays up)
    ea.state.quiet = true;
    const cut = (u: URL) => u.origin === url && u.pathname !== "/v1/ws";
    await pa.route(cut, (r) => r.abort("internetdisconnected"));
    await moment.getByRole("button", { name: /^Like/ }).click();
    const alert = pa.getByRole("alert");
    await alert.waitFor(wait);
    t.match(await alert.innerText(), /can't be reached/);
    await shot(pa, "banner-unreachable.png");
    await pa.unroute(cut);
    // nothing clicked: the app's own check finds Flock again and the banner goes
    await alert.waitFor({ state: "detached", timeout: 20_000 });
    ea.state.quiet = false;
    t.pass("the banner cleared by itself");
  });

  t.test("after an outage that also drops the live connection, the banner clears as it reconnects", async (t) => {
    const po = await actx.newPage();
    const eo = watchErrors(po, "alice's outage tab");
    // the live connection passes through the test: while `down`, a connection is dropped and a new one refused
    let down = false;
    const open: { close(): Promise<void> }[] = [];
    await po.routeWebSocket(/\/v1\/ws$/, (ws) => {
      if (down) return void ws.close();
      ws.connectToServer();
      open.push(ws);
    });
    await po.goto(`${url}/#/friends`);
    await po.locator('[data-live="online"]').waitFor(wait);
    eo.state.quiet = true;
    down = true;
    const cut = (u: URL) => u.origin === url && u.pathname !== "/v1/ws";
    await po.route(cut, (r) => r.abort("internetdisconnected"));
    for (const ws of open.splice(0)) await ws.close();
    await po.locator('[data-live="offline"], [data-live="connecting"]').first().waitFor(wait);
    await po.getByLabel("Find people").fill("Bob");
    const alert = po.getByRole("alert");
    await alert.waitFor(wait);
    t.match(await alert.innerText(), /can't be reached/, "a search with no answer says so");
    await shot(po, "banner-offline.png");
    down = false;
    await po.unroute(cut);
    await po.locator('[data-live="online"]').waitFor({ timeout: 30_000 });
    await alert.waitFor({ state: "detached", timeout: 20_000 });
    t.pass("online again, and the banner is gone");
    // nothing typed or clicked since: the search that failed ran again by itself
    await po.locator(`[data-person="${bob.id}"]`).waitFor(wait);
    t.pass("the search that failed offline found Bob once back");
    eo.state.quiet = false;
    t.same(eo.errors, []);
    await po.close();
  });

  t.test("Seen by, under my newest message in a group", async (t) => {
    const g = await call(url, "POST", "/v1/groups", {
      token: alice.token,
      json: { name: "Pier watch", members: [bob.id] },
    });
    t.equal(g.status, 201);
    const threadId = g.body.group.thread_id as string;
    groupThread = threadId;
    await pa.goto(`${url}/#/chat/t/${threadId}`);
    await pa.getByRole("region", { name: "Conversation with # Pier watch" }).waitFor(wait);
    await pa.getByLabel("Message", { exact: true }).fill("Meet at the pier at six");
    await pa.getByRole("button", { name: "Send", exact: true }).click();
    const mine = pa.locator(".msg.mine", { hasText: "Meet at the pier at six" });
    await mine.waitFor(wait);
    t.equal(await mine.locator("[data-seen]").count(), 0, "nobody has read it yet");
    await pb.goto(`${url}/#/chat/t/${threadId}`);
    await pb.getByRole("list", { name: "Messages" }).getByText("Meet at the pier at six").waitFor(wait);
    await mine.locator('[data-seen="Seen by Bob"]').waitFor(wait);
    t.pass("Seen by Bob, live");
    await shot(pa, "group-seen-by.png");
    // after a reload, from the thread's receipts
    await pa.reload();
    await pa
      .locator(".msg.mine", { hasText: "Meet at the pier at six" })
      .locator('[data-seen="Seen by Bob"]')
      .waitFor(wait);
    t.pass("Seen by Bob after a reload");
  });

  t.test("a picture chosen on the profile page shows on the other side", async (t) => {
    await pa.goto(`${url}/#/profile`);
    await pa.getByRole("heading", { name: "Picture" }).waitFor(wait);
    t.equal(
      (await pa.locator("[data-avatar][data-initials]").count()) > 0,
      true,
      "initials before a picture is chosen",
    );
    await pa.getByLabel("Choose a picture").setInputFiles({ name: "alice.png", mimeType: "image/png", buffer: png() });
    await pa.getByText("Picture saved.").waitFor(wait);
    const img = pa.locator("img.avatar");
    await img.waitFor(wait);
    const src = (await img.getAttribute("src")) ?? "";
    t.match(src, new RegExp(`^${url}/v1/avatars/`), "the picture from the API, by its public path");
    t.ok(
      await img.evaluate((el) => (el as HTMLImageElement).complete && (el as HTMLImageElement).naturalWidth > 0),
      "the image loads without credentials",
    );
    await shot(pa, "profile-picture.png");

    // Bob: on his friends list and in the conversation
    await pb.goto(`${url}/#/friends`);
    const friend = pb.locator(`[data-friend="${alice.id}"] img.avatar`);
    await friend.waitFor(wait);
    t.equal(await friend.getAttribute("src"), src, "Bob's friends list shows Alice's picture");
    await pb.goto(`${url}/#/chat`);
    await pb.locator(`.threads [data-thread] img.avatar[src="${src}"]`).first().waitFor(wait);
    t.pass("and his conversation list");
    // the group, with Alice's picture on her messages, and a search beside it (the README's picture)
    await pa.goto(`${url}/#/chat/t/${groupThread}`);
    await pa.getByLabel("Message", { exact: true }).fill("Bring the big lens: the pelican is back");
    await pa.getByRole("button", { name: "Send", exact: true }).click();
    await pb.goto(`${url}/#/chat/t/${groupThread}`);
    // her picture on her run of messages, and the new message itself on Bob's side (an earlier one of hers shows the
    // picture too): once it is there it is committed, so the search below finds it
    await pb.locator(`.msg img.avatar[src="${src}"]`).last().waitFor(wait);
    await pb.locator(".msg", { hasText: "Bring the big lens" }).waitFor(wait);
    await pb.getByLabel("Search messages").fill("pelican");
    await pb.getByLabel("Search messages").press("Enter");
    await pb.getByRole("region", { name: "Messages found" }).locator("[data-found]").nth(1).waitFor(wait);
    await pa.locator(".msg.mine", { hasText: "Bring the big lens" }).locator('[data-seen="Seen by Bob"]').waitFor(wait);
    await shot(pb, "avatars-chat.png");

    await pa.goto(`${url}/#/profile`);
    await pa.getByRole("button", { name: "Remove picture" }).click();
    await pa.getByText("Picture removed.").waitFor(wait);
    t.equal(await pa.locator("img.avatar").count(), 0, "back to initials");
  });

  t.test(
    "a friend request that arrives while the tab is hidden shows a notification and the Friends badge",
    async (t) => {
      await pb.goto(`${url}/#/chat`);
      await pb.getByRole("button", { name: "Enable notifications" }).click();
      await pb.getByRole("button", { name: "Turn off notifications" }).waitFor(wait);
      await setHidden(pb, true);
      const r = await call(url, "POST", "/v1/friends/request", { token: carol.token, json: { to: bob.id } });
      t.equal(r.status, 202, "carol asked bob");
      await pb.waitForFunction(
        () => (window as unknown as { __notifications: unknown[] }).__notifications.length > 0,
        undefined,
        wait,
      );
      const { shown } = await notificationsOf(pb);
      t.same(
        shown.map((n) => n.title),
        ["Carol wants to be friends"],
        "one notification, naming who asked",
      );
      await setHidden(pb, false);
      await pb.locator('nav [data-requests="1"]').waitFor(wait);
      await pb.getByRole("link", { name: "Friends 1 request" }).click();
      await pb.getByRole("list", { name: "Incoming requests" }).getByText("Carol").waitFor(wait);
      t.pass("the request is on the Friends page under Carol's name");
    },
  );

  t.test("no console errors", async (t) => {
    t.same(ea.errors, [], "alice");
    t.same(eb.errors, [], "bob");
  });
}
