// The web app end to end in headless Debian chromium: two people, each signed in through an injected test wallet
// (a viem account behind window.ethereum, personal_sign of the server's sign-in message), befriend each other and
// see each other online, post moments and see the other's with likes and comments, chat with typing indicators and
// an image attachment, and keep chatting after the server restarts with no message lost. Every page loads with no
// console error; an expired token sends the page back to sign-in. Screenshots go to test-output/web/.
import { createServer } from "node:net";
import t from "tap";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { buildWeb } from "../web/build.mjs";
import { startTestNode, type TestNode } from "./helpers/node.ts";
import { call } from "./helpers/http.ts";
import { TimedOut, until } from "./helpers/wait.ts";
import { launch, NO_BROWSER, type Page, shot, signInWithWallet, walletContext, watchErrors } from "./helpers/web.ts";

const freePort = () =>
  new Promise<number>((resolve) => {
    const s = createServer().listen(0, "127.0.0.1", () => {
      const port = (s.address() as { port: number }).port;
      s.close(() => resolve(port));
    });
  });

/** Leaves the feed and comes back to it: it loads again. */
async function reopenFeed(page: Page): Promise<void> {
  await page.getByRole("link", { name: "Friends" }).click();
  await page.getByRole("heading", { name: "Friends", exact: true }).waitFor({ timeout: 15_000 });
  await page.getByRole("link", { name: "Feed" }).click();
}

if (NO_BROWSER) {
  t.plan(0, NO_BROWSER); // the whole file: reported as skipped, with the reason
} else {
  await buildWeb();

  t.test("the page is served with its CSP and cache rules", async (t) => {
    const node = await startTestNode(t, { engine: "memory" });
    const page = await call(node.url, "GET", "/");
    t.equal(page.status, 200);
    t.equal(page.headers.get("cache-control"), "no-cache");
    const csp = page.headers.get("content-security-policy") ?? "";
    t.match(csp, /script-src 'self';/);
    t.match(csp, new RegExp(`connect-src 'self' ws://${new URL(node.url).host} wss://${new URL(node.url).host};`));
    t.notMatch(csp, /unsafe-inline|unsafe-eval/);
    const js = /src="(\/assets\/main-[A-Za-z0-9]+\.js)"/.exec(page.text)?.[1];
    t.ok(js, "the page names its hashed bundle");
    const asset = await call(node.url, "GET", js!);
    t.equal(asset.status, 200);
    t.equal(asset.headers.get("cache-control"), "public, max-age=31536000, immutable");
    t.match(asset.headers.get("content-type"), /javascript/);
    t.equal((await call(node.url, "GET", "/assets/..%2Fpackage.json")).status, 404);
    t.equal((await call(node.url, "GET", "/assets/main-AAAAAAAA.js")).status, 404);
  });

  t.test("two people: friends, presence, moments, chat, typing, an image, a restart", async (t) => {
    const port = await freePort();
    let node: TestNode = await startTestNode(t, { engine: "redis", env: { PORT: String(port) } });
    const url = node.url;
    const browser = await launch();
    t.teardown(() => browser.close());
    const alice = await walletContext(browser, privateKeyToAccount(generatePrivateKey()));
    const bob = await walletContext(browser, privateKeyToAccount(generatePrivateKey()));
    const pa = await alice.ctx.newPage();
    const pb = await bob.ctx.newPage();
    const ea = watchErrors(pa, "alice");
    const eb = watchErrors(pb, "bob");
    const wait = { timeout: 15_000 };

    const a = await signInWithWallet(pa, url);
    const b = await signInWithWallet(pb, url);
    t.match(a.id, /^P\d+$/, "alice is a human");
    t.match(a.token, /^pt_/);
    t.same(
      alice.calls.slice(0, 2),
      ["eth_requestAccounts", "personal_sign"],
      "the wallet was asked for accounts, then to sign",
    );
    await pa.locator('[data-live="online"]').waitFor(wait);
    await pb.locator('[data-live="online"]').waitFor(wait);

    // friends: alice asks by id (a stranger: search offers the pasted id), bob accepts, both see the other online
    // (bob's list gets the request live, alice's gets the new friend live)
    await pa.getByRole("link", { name: "Friends" }).click();
    await pa.getByLabel("Find people").fill(b.id);
    await pa
      .locator(`[data-person="${b.id}"]`)
      .getByRole("button", { name: /^Add .* as a friend$/ })
      .click();
    await pa.getByRole("list", { name: "Outgoing requests" }).locator(`[data-name-of="${b.id}"]`).waitFor(wait);
    await pb.getByRole("link", { name: "Friends" }).click();
    await pb.getByRole("list", { name: "Incoming requests" }).locator(`[data-name-of="${a.id}"]`).waitFor(wait);
    await pb.getByRole("button", { name: "Accept", exact: true }).click();
    await pb.locator(`[data-friend="${a.id}"][data-online="yes"]`).waitFor(wait);
    await pa.locator(`[data-friend="${b.id}"][data-online="yes"]`).waitFor(wait);
    t.pass("each sees the other as a friend, online");

    // moments: each posts for friends, sees the other's; bob likes alice's, alice comments on bob's
    await pa.getByRole("link", { name: "Feed" }).click();
    await pa.getByLabel("Share a moment").fill("Sunrise over the harbour");
    await pa.getByLabel("Visible to").selectOption("friends");
    await pa.getByRole("button", { name: "Post" }).click();
    await pa.locator("[data-moment^='moment_']", { hasText: "Sunrise over the harbour" }).waitFor(wait);
    await pb.getByRole("link", { name: "Feed" }).click();
    await pb.getByLabel("Share a moment").fill("Baked bread today");
    await pb.getByRole("button", { name: "Post" }).click();
    await pb.locator("[data-moment^='moment_']", { hasText: "Baked bread today" }).waitFor(wait);
    const aliceMoment = pb.locator("[data-moment]", { hasText: "Sunrise over the harbour" });
    await aliceMoment.waitFor(wait);
    // The page shows a like and a comment at once, before the server answers: wait for the answer before the
    // other page reads the feed, or its refresh can race the write on a busy machine.
    const liked = pb.waitForResponse(
      (r) => r.request().method() === "POST" && /\/v1\/moments\/[^/]+\/like$/.test(r.url()),
      wait,
    );
    await aliceMoment.getByRole("button", { name: /^Like/ }).click();
    await aliceMoment.getByRole("button", { name: /^Unlike 1/ }).waitFor(wait);
    t.equal((await liked).status(), 204, "the like is stored");
    await reopenFeed(pa);
    const bobMoment = pa.locator("[data-moment]", { hasText: "Baked bread today" });
    await bobMoment.waitFor(wait);
    await pa
      .locator("[data-moment]", { hasText: "Sunrise over the harbour" })
      .getByRole("button", { name: /^Like 1/ })
      .waitFor(wait);
    await bobMoment.getByRole("button", { name: /^Comments/ }).click();
    await bobMoment.getByPlaceholder("Write a comment").fill("Smells great");
    const commented = pa.waitForResponse(
      (r) => r.request().method() === "POST" && /\/v1\/moments\/[^/]+\/comments$/.test(r.url()),
      wait,
    );
    await bobMoment.getByRole("button", { name: "Comment", exact: true }).click();
    await bobMoment.getByRole("button", { name: /^Comments 1/ }).waitFor(wait);
    t.equal((await commented).status(), 201, "the comment is stored");
    await reopenFeed(pb);
    const own = pb.locator("[data-moment]", { hasText: "Baked bread today" });
    await own.getByRole("button", { name: /^Comments 1/ }).click();
    await own.getByText("Smells great").waitFor(wait);
    t.pass("moments, likes and comments seen by both");
    await shot(pa, "feed.png");

    // chat: alice writes to bob; bob sees it live, types, alice sees the typing indicator
    await pa.getByRole("link", { name: "Friends" }).click();
    await pa.locator(`[data-friend="${b.id}"]`).getByRole("link", { name: "Message" }).click();
    await pa.getByLabel("Message", { exact: true }).fill("Hi Bob, coffee later?");
    await pa.getByRole("button", { name: "Send", exact: true }).click();
    await pa.waitForURL(/#\/chat\/t\/thread_/, wait);
    const threadId = pa.url().split("/").pop()!;
    await pb.getByRole("link", { name: "Chat" }).click();
    await pb.locator(`[data-thread="${threadId}"]`).click();
    await pb.locator("[data-message]", { hasText: "Hi Bob, coffee later?" }).waitFor(wait);
    await pb.getByLabel("Message", { exact: true }).pressSequentially("Sure", { delay: 20 });
    await pa.getByText(/is typing…/).waitFor(wait);
    await pb.getByRole("button", { name: "Send", exact: true }).click();
    await pa.locator("[data-message]", { hasText: "Sure" }).waitFor(wait);
    await pa.getByText(/is typing…/).waitFor({ state: "hidden", timeout: 15_000 });
    await pa.getByLabel("Message", { exact: true }).pressSequentially("ok", { delay: 20 });
    await pb.getByText(/is typing…/).waitFor(wait);
    t.pass("typing shows both ways");

    // an image attachment: uploaded, sent, shown inline on the other side
    const png = Buffer.from(
      "iVBORw0KGgoAAAANSUhEUgAAABAAAAAQCAIAAACQkWg2AAAAIklEQVR4nGP4z8DwHwsGAvwSWJhzGvU6KXqjGQqGxgAAVW8/wQ6x2jIAAAAASUVORK5CYII=",
      "base64",
    );
    await pa.locator("#attach").setInputFiles({ name: "square.png", mimeType: "image/png", buffer: png });
    await pa.getByLabel("Message", { exact: true }).fill("a picture");
    await pa.getByRole("button", { name: "Send", exact: true }).click();
    const img = pb.locator("[data-message]", { hasText: "a picture" }).getByRole("img", { name: "square.png" });
    await img.waitFor(wait);
    await pb.waitForFunction(
      () =>
        [...document.querySelectorAll<HTMLImageElement>("img[alt='square.png']")].some(
          (i) => i.complete && i.naturalWidth === 16,
        ),
      undefined,
      wait,
    );
    t.pass("the image arrives and renders (16 px wide)");
    await shot(pb, "chat.png");

    // the server restarts: both pages reconnect, and what is sent across the restart arrives exactly once
    ea.state.quiet = eb.state.quiet = true;
    await node.close();
    await pb.locator('[data-live="online"]').waitFor({ state: "detached", timeout: 15_000 });
    node = await startTestNode(t, {
      engine: "redis",
      schema: node.schema,
      prefix: node.prefix,
      env: { PORT: String(port) },
    });
    await pa.locator('[data-live="online"]').waitFor({ timeout: 30_000 });
    // sent before bob's page is back: it waits in bob's mailbox
    const sent = await call(url, "POST", "/v1/messages", {
      token: a.token,
      json: { to: b.id, body: "sent during the restart" },
    });
    t.equal(sent.status, 201);
    await pb.locator('[data-live="online"]').waitFor({ timeout: 30_000 });
    await pa.getByLabel("Message", { exact: true }).fill("after the restart");
    await pa.getByRole("button", { name: "Send", exact: true }).click();
    await pb.locator("[data-message]", { hasText: "after the restart" }).waitFor(wait);
    await pb.locator("[data-message]", { hasText: "sent during the restart" }).waitFor(wait);
    ea.state.quiet = eb.state.quiet = false;
    const bodies = await pb.locator("[data-message] p").allTextContents();
    t.same(
      bodies.filter((x) => x !== ""),
      ["Hi Bob, coffee later?", "Sure", "a picture", "sent during the restart", "after the restart"],
      "bob's conversation holds every message once, in order",
    );
    // every delivered message is acked after display: nothing stays pending for bob. The page's ack goes out after it
    // renders the message and the node batches acks, so the check waits for it rather than racing it
    let pending: unknown[] | undefined;
    await until(
      async () => {
        pending = (
          await call<{ messages: unknown[] }>(url, "GET", "/v1/messages/pending?timeout=0", { token: b.token })
        ).body.messages;
        return pending.length === 0;
      },
      { ms: 15_000, every: 200, what: () => `bob's acks (still pending: ${JSON.stringify(pending)})` },
    ).catch((err: unknown) => {
      if (!(err instanceof TimedOut)) throw err; // a timeout shows below, as what is still pending
    });
    t.same(pending, [], "nothing left unacknowledged");

    // every page loads with no console error
    for (const p of [pa, pb]) {
      for (const h of ["#/feed", "#/friends", "#/chat", "#/agents", "#/payments"]) {
        await p.goto(`${url}/${h}`);
        await p.getByRole("navigation", { name: "Main" }).waitFor(wait);
        await p.locator('[data-live="online"]').waitFor(wait);
      }
    }
    t.same([...ea.errors, ...eb.errors], [], "no console or page error");

    // signing out leaves the token behind
    await pa.getByRole("button", { name: "Sign out" }).click();
    await pa.getByRole("button", { name: "Connect wallet and sign in" }).waitFor(wait);
    t.equal(await pa.evaluate(() => localStorage.getItem("flock.session")), null);
  });

  t.test("an expired token sends the page back to sign-in, which says why", async (t) => {
    const node = await startTestNode(t, { engine: "memory" });
    const browser = await launch();
    t.teardown(() => browser.close());
    const ctx = await browser.newContext();
    const stale = {
      token: "pt_expired0000000000000000000000000000000000",
      kind: "human",
      me: { id: "P1", display_name: "Gone" },
    };
    await ctx.addInitScript(
      `localStorage.setItem("flock.session", JSON.stringify({ ...${JSON.stringify(stale)}, api: location.origin }))`,
    );
    const page: Page = await ctx.newPage();
    await page.goto(node.url);
    await page.getByText("Your session expired. Please sign in again.").waitFor({ timeout: 15_000 });
    t.pass("back at sign-in with the reason");
  });
}
