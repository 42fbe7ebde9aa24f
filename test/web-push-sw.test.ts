// The web app's service worker in Chromium (web/sw.ts; docs/ARCHITECTURE.md, "Web Push"). Chromium's own push service
// cannot be replaced or reached here, so the payload the server pushes (made by a node for a person whose page was
// closed, decrypted by the local push service, test/helpers/push-server.ts) is handed to the service worker through
// the DevTools protocol (ServiceWorker.deliverPushMessage): it shows the notification, tagged by its conversation, and
// a click on it opens that conversation in the open page. The toggle that subscribes says plainly when this browser's
// push service cannot be had.
import t from "tap";
import { buildWeb } from "../web/build.mjs";
import { call } from "./helpers/http.ts";
import { signInWithWallet } from "./helpers/humans.ts";
import { startTestNode } from "./helpers/node.ts";
import { startPushServer } from "./helpers/push-server.ts";
import { befriend } from "./helpers/social.ts";
import { until } from "./helpers/wait.ts";
import { launch, NO_BROWSER, shot, signInWithToken, watchErrors } from "./helpers/web.ts";

interface Shown {
  title: string;
  body: string;
  tag: string;
  data: { url?: string };
}

t.test("the service worker shows a pushed message and opens its conversation", { skip: NO_BROWSER }, async (t) => {
  await buildWeb();
  const node = await startTestNode(t, { engine: "memory", env: { FLOCK_PUSH_ALLOW_PRIVATE: "true" } });
  const url = node.url;
  const push = await startPushServer(t);

  // bob's page is closed: alice's message is pushed, and the local push service decrypts it
  const alice = await signInWithWallet(url);
  const bob = await signInWithWallet(url);
  await befriend(url, alice, bob);
  const sub = push.subscribe();
  const r = await call(url, "POST", "/v1/users/me/push-subscriptions", { token: bob.token, json: sub.json });
  t.equal(r.status, 201, r.text);
  const sent = await call(url, "POST", "/v1/messages", {
    token: alice.token,
    json: { to: bob.id, body: "Lunch at one?" },
  });
  t.equal(sent.status, 201);
  await until(() => sub.received.length === 1, { what: "the push of alice's message", ms: 10_000 });
  const payload = sub.received[0]!.text;
  const parsed = JSON.parse(payload) as { url: string; thread_id: string };
  t.equal(parsed.url, `#/chat/t/${sent.body.thread_id}`);

  const browser = await launch();
  t.teardown(() => browser.close());
  const ctx = await browser.newContext({ viewport: { width: 1100, height: 800 } });
  await ctx.grantPermissions(["notifications"], { origin: url });
  const page = await ctx.newPage();
  const { errors } = watchErrors(page, "bob");
  await signInWithToken(page, url, bob.token);

  // the toggle: permission granted, the service worker registered; subscribing needs Chromium's push service, which
  // cannot be reached from here, and the page says so (or that it worked, where it can be reached)
  await page.goto(`${url}/#/chat`);
  await page.getByRole("button", { name: "Enable notifications" }).click();
  await page.getByRole("button", { name: "Turn off notifications" }).waitFor({ timeout: 15_000 });
  const note = page.locator('[data-push="failed"], [data-push="on"]');
  await note.waitFor({ timeout: 30_000 });
  const told = await note.innerText();
  t.match(told, /push to a closed page could not be set up here|reach you with every Flock page closed/, told);
  await shot(page, "push-toggle.png");

  // the registration, as DevTools sees it
  const cdp = await ctx.newCDPSession(page);
  const registrations = new Map<string, { scopeURL: string; isDeleted: boolean }>();
  cdp.on("ServiceWorker.workerRegistrationUpdated", (e) => {
    for (const reg of e.registrations) registrations.set(reg.registrationId, reg);
  });
  const active = new Set<string>();
  cdp.on("ServiceWorker.workerVersionUpdated", (e) => {
    for (const v of e.versions) if (v.status === "activated") active.add(v.registrationId);
  });
  await cdp.send("ServiceWorker.enable");
  let registrationId = "";
  await until(
    () => {
      const found = [...registrations].find(
        ([id, reg]) => reg.scopeURL === `${url}/` && !reg.isDeleted && active.has(id),
      );
      registrationId = found?.[0] ?? "";
      return registrationId !== "";
    },
    { what: "the service worker registered at / and active", ms: 15_000, every: 20 },
  );

  await cdp.send("ServiceWorker.deliverPushMessage", { origin: url, registrationId, data: payload });
  let shown: Shown[] = [];
  await until(
    async () => {
      shown = await page.evaluate(async () => {
        const reg = await navigator.serviceWorker.ready;
        return (await reg.getNotifications()).map((n) => ({
          title: n.title,
          body: n.body,
          tag: n.tag,
          data: n.data as { url?: string },
        }));
      });
      return shown.length > 0;
    },
    { what: "the notification shown", ms: 15_000, every: 50 },
  );
  t.equal(shown.length, 1);
  t.match(shown[0], {
    title: alice.display_name,
    body: "Lunch at one?",
    tag: parsed.thread_id,
    data: { url: parsed.url },
  });

  // a second push to the same conversation replaces its notification (one per conversation)
  await cdp.send("ServiceWorker.deliverPushMessage", { origin: url, registrationId, data: payload });
  await page.goto(`${url}/#/feed`);
  const count = await page.evaluate(
    async () => (await (await navigator.serviceWorker.ready).getNotifications()).length,
  );
  t.equal(count, 1, "one notification per conversation");

  // the click: the worker's own notificationclick handler, given the notification it showed
  const worker =
    ctx.serviceWorkers().find((w) => w.url() === `${url}/sw.js`) ?? (await ctx.waitForEvent("serviceworker"));
  await worker.evaluate(async () => {
    const scope = self as unknown as {
      registration: { getNotifications(): Promise<Notification[]> };
      dispatchEvent(e: Event): boolean;
    };
    const [n] = await scope.registration.getNotifications();
    const Click = (globalThis as unknown as { NotificationEvent: new (type: string, init: object) => Event })
      .NotificationEvent;
    scope.dispatchEvent(new Click("notificationclick", { notification: n }));
  });
  await page.waitForFunction((want) => location.hash === want, parsed.url, { timeout: 15_000 });
  await page.getByText("Lunch at one?").first().waitFor({ timeout: 15_000 });
  t.pass("the click opened the conversation");
  const left = await page.evaluate(async () => (await (await navigator.serviceWorker.ready).getNotifications()).length);
  t.equal(left, 0, "the clicked notification is closed");
  await shot(page, "push-opened.png");
  t.same(errors, [], "no console or page errors");
});
