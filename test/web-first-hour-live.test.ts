// Two first-hour frictions in headless Debian chromium, each at 1280 and 375 px, on one node:
//   - likes, comments and new moments arrive live: Ana and Ben (friends) each in a browser; Ben's moment reaches Ana's
//     feed without a reload, Ana's like and comment show on Ben's page without one, and whether Ana liked it comes
//     from the server (liked_by_me), so a fresh browser of hers shows it liked too;
//   - someone new reaches you by your link: a stranger copies their id and link on the Friends page, people search
//     that finds no one says who can be found and points at the link, the link opens the stranger's card with "Add
//     friend", and once a request is accepted the "Request sent." banner and the stale result clear by themselves.
// Screenshots go to test-output/web/.
import t, { type Test } from "tap";
import { call } from "./helpers/http.ts";
import { signInWithWallet as humanOverHttp, rename } from "./helpers/humans.ts";
import { befriend } from "./helpers/social.ts";
import {
  launch,
  NO_BROWSER,
  type Page,
  pageWidths,
  shot,
  signInLive,
  unnamedControls,
  watchErrors,
  webNode,
} from "./helpers/web.ts";

const wait = { timeout: 15_000 };
const WIDTHS = [
  { width: 1280, height: 800 },
  { width: 375, height: 740 },
] as const;

/** No horizontal scroll at the page's width. */
async function fits(t: Test, page: Page, what: string) {
  const w = await pageWidths(page);
  t.ok(w.scroll <= w.width, `${what}: no horizontal scroll (${w.scroll} <= ${w.width})`);
}

if (NO_BROWSER) {
  t.plan(0, NO_BROWSER); // the whole file: reported as skipped, with the reason
} else {
  const url = await webNode(t);
  const ana = await rename(url, await humanOverHttp(url), "Ana");
  const ben = await rename(url, await humanOverHttp(url), "Ben");
  await befriend(url, ana, ben);

  const browser = await launch();
  t.teardown(() => browser.close());
  const actx = await browser.newContext({ viewport: WIDTHS[0] });
  const bctx = await browser.newContext({ viewport: WIDTHS[0] });
  const pa = await actx.newPage();
  const pb = await bctx.newPage();
  const ea = watchErrors(pa, "ana");
  const eb = watchErrors(pb, "ben");
  await signInLive(pa, url, ana.token);
  await signInLive(pb, url, ben.token);

  t.test("likes, comments and a friend's new moment arrive without a reload", async (t) => {
    for (const size of WIDTHS) {
      await Promise.all([pa.setViewportSize(size), pb.setViewportSize(size)]);
      await Promise.all([pa, pb].map((p) => p.getByRole("link", { name: "Feed" }).click()));
      await pa.getByRole("heading", { name: "Feed", exact: true }).waitFor(wait);
      await pb.getByRole("heading", { name: "Feed", exact: true }).waitFor(wait);
      const content = `The heron is back on the weir (${size.width} px)`;
      const r = await call(url, "POST", "/v1/moments", {
        token: ben.token,
        json: { content, visibility: "friends" },
      });
      t.equal(r.status, 201);
      const id = r.body.id as string;
      // it reaches both feeds over the live connection (the polling check runs only every 30 s): behind the
      // "new moments" button when the list already shows some
      for (const p of [pa, pb]) {
        const card = p.locator(`[data-moment="${id}"]`);
        const pill = p.locator("[data-fresh]");
        await Promise.race([card.waitFor(wait), pill.waitFor(wait)]);
        if (!(await card.count())) await pill.click();
        await card.waitFor(wait);
      }
      t.pass(`Ben's new moment shown to Ana and to Ben's open tab at ${size.width} px, no reload`);
      const anas = pa.locator(`[data-moment="${id}"]`);
      const bens = pb.locator(`[data-moment="${id}"]`);
      await anas.getByRole("button", { name: /^Like/ }).click();
      await bens.getByRole("button", { name: "Like 1" }).waitFor(wait);
      t.pass("Ana's like counted on Ben's page without a reload");
      await anas.getByRole("button", { name: /^Comments/ }).click();
      await anas.getByLabel("Comment", { exact: true }).fill("So glad!");
      await anas.getByRole("button", { name: "Comment", exact: true }).click();
      await bens.getByRole("button", { name: "Comments 1" }).waitFor(wait);
      t.pass("Ana's comment counted on Ben's page without a reload");
      await anas.getByRole("button", { name: "Unlike 1" }).waitFor(wait);
      await fits(t, pb, `Ben's feed at ${size.width} px`);
      t.same(await unnamedControls(pb), [], "every control of the feed has a name");
      await shot(pb, `first-hour-live-counts-${size.width}.png`);
      await shot(pa, `first-hour-live-liked-${size.width}.png`);

      // liked_by_me: the server's, so a fresh browser of Ana's shows the moment liked
      const one = await call(url, "GET", `/v1/moments/${id}`, { token: ana.token });
      t.match(one.body, { like_count: 1, comment_count: 1, liked_by_me: true }, "the API says Ana liked it");
      const fresh = await browser.newContext({ viewport: size });
      const pf = await fresh.newPage();
      const ef = watchErrors(pf, "ana, fresh");
      await signInLive(pf, url, ana.token);
      const card = pf.locator(`[data-moment="${id}"]`);
      await card.getByRole("button", { name: "Unlike 1", pressed: true }).waitFor(wait);
      t.pass("a fresh browser context shows the like as Ana's");
      await shot(pf, `first-hour-live-fresh-context-${size.width}.png`);
      t.same(ef.errors, [], "no console or page errors in the fresh context");
      await fresh.close();
    }
  });

  t.test("a stranger's link, the search rule, and a request's answer clearing what it left", async (t) => {
    for (const size of WIDTHS) {
      const cleo = await rename(url, await humanOverHttp(url), `Cleo ${size.width}`);
      const dov = await rename(url, await humanOverHttp(url), `Dov ${size.width}`);
      const cctx = await browser.newContext({ viewport: size });
      await cctx.grantPermissions(["clipboard-read", "clipboard-write"], { origin: url });
      const pc = await cctx.newPage();
      const ec = watchErrors(pc, "cleo");
      await signInLive(pc, url, cleo.token);
      await pa.setViewportSize(size);

      // Cleo copies her id and her link on the Friends page
      await pc.getByRole("link", { name: "Friends" }).click();
      await pc.getByRole("button", { name: "Copy my id" }).click();
      await pc.getByText("Id copied.").waitFor(wait);
      t.equal(await pc.evaluate(() => navigator.clipboard.readText()), cleo.id, "the id copied");
      await pc.getByRole("button", { name: "Copy my link" }).click();
      await pc.getByText("Link copied.").waitFor(wait);
      const link = await pc.evaluate(() => navigator.clipboard.readText());
      t.equal(link, `${url}/#/p/${cleo.id}/${encodeURIComponent(cleo.display_name)}`, "the link names her card");
      await fits(t, pc, `the share block at ${size.width} px`);
      await pc.locator(".share-me").scrollIntoViewIfNeeded();
      await shot(pc, `first-hour-share-link-${size.width}.png`);

      // Ana looks for her by name: no one, and the page says who can be found and points at the link
      await pa.getByRole("link", { name: "Friends" }).click();
      await pa.getByLabel("Find people").fill(cleo.display_name);
      const none = pa.locator("[data-no-one]");
      await none.waitFor(wait);
      t.match(await none.innerText(), /a person only by those who are already their friends or share a conversation/);
      t.equal(await none.getByRole("link", { name: "Your link" }).count(), 1, "it points at the share link");
      await fits(t, pa, `no one found at ${size.width} px`);
      await shot(pa, `first-hour-no-one-found-${size.width}.png`);

      // the link opens Cleo's card with Add friend; her acceptance reaches the card live
      await pa.goto(link);
      const card = pa.locator(`[data-person="${cleo.id}"]`);
      await card.getByText(cleo.display_name, { exact: true }).waitFor(wait);
      await card.getByRole("button", { name: "Add friend" }).click();
      await card.getByText("Request sent").waitFor(wait);
      await fits(t, pa, `the person card at ${size.width} px`);
      t.same(await unnamedControls(pa, 1), [], "every control of the card has a name");
      await shot(pa, `first-hour-person-card-${size.width}.png`);
      await pc.reload();
      const incoming = pc.getByRole("list", { name: "Incoming requests" });
      await incoming.getByRole("button", { name: "Accept", exact: true }).click();
      await card.getByRole("link", { name: "Message" }).waitFor(wait);
      t.pass("the card turns to Message once Cleo accepts, no reload");

      // a pasted id on the Friends page: "Request sent." and the result clear once Dov (not online) accepts
      await pa.getByRole("link", { name: "Friends" }).click();
      await pa.getByLabel("Find people").fill(dov.id);
      const found = pa.locator(`[data-person="${dov.id}"]`);
      await found.getByRole("button", { name: /^Add .* as a friend$/ }).click();
      await pa.getByText("Request sent.", { exact: true }).waitFor(wait);
      await found.getByText("Request sent").waitFor(wait);
      const asked = await call(url, "GET", "/v1/friends/requests", { token: dov.token });
      const request = (asked.body.incoming as { id: string; from: string }[]).find((x) => x.from === ana.id);
      const accepted = await call(url, "POST", `/v1/friends/requests/${request!.id}/accept`, { token: dov.token });
      t.equal(accepted.status, 200);
      await pa.getByText("Request sent.", { exact: true }).waitFor({ state: "detached", ...wait });
      await found.getByRole("link", { name: /^Message / }).waitFor(wait);
      await found.getByText("friend", { exact: true }).waitFor(wait);
      t.pass("the banner is gone and the result now says friend, with Message");
      await fits(t, pa, `friends page after the answer at ${size.width} px`);
      await shot(pa, `first-hour-request-answered-${size.width}.png`);
      t.same(ec.errors, [], "no console or page errors for the stranger");
      await cctx.close();
    }
  });

  t.test("no console or page errors", async (t) => {
    t.same([...ea.errors, ...eb.errors], []);
  });
}
