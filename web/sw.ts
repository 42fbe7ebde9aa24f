// The web app's service worker (served at /sw.js, scope /; docs/ARCHITECTURE.md, "Web Push"). A push (runtime/push/:
// `{type, title, body, url, thread_id, unread}`, encrypted to this browser's subscription) is shown as a notification,
// one per conversation (a thread's next replaces its last) and one for friend requests, and sets the app's badge to
// the unread count. A click on one brings an open page of the app forward and tells it to open the notification's
// route (web/src/notify.tsx hears it), or opens the app there when no page is open.
// It is built by web/build.mjs on its own, outside the app's TypeScript program (a worker's globals are not a page's):
// the few worker types it uses are declared here.

interface PushData {
  type: "message" | "friend_request";
  title: string;
  body: string;
  url: string;
  thread_id: string | null;
  unread: number;
}

interface ShownNotification {
  readonly data: unknown;
  readonly tag: string;
  close(): void;
}

interface WindowClientLike {
  readonly url: string;
  focus(): Promise<WindowClientLike>;
  postMessage(message: unknown): void;
}

interface ExtendableEventLike extends Event {
  waitUntil(p: Promise<unknown>): void;
}

interface PushEventLike extends ExtendableEventLike {
  readonly data: { json(): unknown; text(): string } | null;
}

interface NotificationEventLike extends ExtendableEventLike {
  readonly notification: ShownNotification;
}

interface WorkerScope {
  readonly location: Location;
  readonly registration: {
    showNotification(
      title: string,
      options: { body: string; tag: string; data: unknown; icon?: string },
    ): Promise<void>;
  };
  readonly clients: {
    matchAll(options: { type: "window"; includeUncontrolled: boolean }): Promise<WindowClientLike[]>;
    openWindow(url: string): Promise<WindowClientLike | null>;
    claim(): Promise<void>;
  };
  skipWaiting(): Promise<void>;
  addEventListener(type: "push", listener: (e: PushEventLike) => void): void;
  addEventListener(type: "notificationclick", listener: (e: NotificationEventLike) => void): void;
  addEventListener(type: "install" | "activate", listener: (e: ExtendableEventLike) => void): void;
}

const sw = self as unknown as WorkerScope;
const nav = navigator as Navigator & { setAppBadge?(n: number): Promise<void>; clearAppBadge?(): Promise<void> };

/** What a push carries, read defensively: a push that is not ours still shows something. */
function readPush(e: PushEventLike): PushData {
  const fallback: PushData = { type: "message", title: "Flock", body: "", url: "#/chat", thread_id: null, unread: 0 };
  try {
    const v = e.data?.json() as Partial<PushData> | undefined;
    if (!v || typeof v !== "object") return fallback;
    return {
      type: v.type === "friend_request" ? "friend_request" : "message",
      title: typeof v.title === "string" ? v.title : fallback.title,
      body: typeof v.body === "string" ? v.body : "",
      url: typeof v.url === "string" && v.url.startsWith("#/") ? v.url : fallback.url,
      thread_id: typeof v.thread_id === "string" ? v.thread_id : null,
      unread: typeof v.unread === "number" ? v.unread : 0,
    };
  } catch {
    return { ...fallback, body: e.data?.text() ?? "" };
  }
}

/** Show a push: one notification per conversation (its tag), the badge at the person's unread count. */
async function showPush(p: PushData): Promise<void> {
  const badge = p.unread > 0 ? nav.setAppBadge?.(p.unread) : nav.clearAppBadge?.();
  await Promise.all([
    sw.registration.showNotification(p.title, {
      body: p.body,
      tag: p.thread_id ?? "friends",
      data: { url: p.url, type: p.type, thread_id: p.thread_id },
    }),
    badge?.catch(() => undefined),
  ]);
}

/** A notification was clicked: an open page of the app is brought forward and opens its route; else one is opened there. */
async function openFromNotification(n: ShownNotification): Promise<void> {
  n.close();
  const data = n.data as { url?: unknown } | null;
  const route = typeof data?.url === "string" && data.url.startsWith("#/") ? data.url : "#/chat";
  const pages = await sw.clients.matchAll({ type: "window", includeUncontrolled: true });
  const page = pages.find((c) => new URL(c.url).origin === sw.location.origin);
  if (!page) {
    await sw.clients.openWindow(`/${route}`);
    return;
  }
  page.postMessage({ type: "flock.open", url: route });
  // focusing needs the click's user activation: without it (a click the browser did not make) the page still opens it
  await page.focus().catch(() => undefined);
}

sw.addEventListener("install", (e) => e.waitUntil(sw.skipWaiting()));
sw.addEventListener("activate", (e) => e.waitUntil(sw.clients.claim()));
sw.addEventListener("push", (e) => e.waitUntil(showPush(readPush(e))));
sw.addEventListener("notificationclick", (e) => {
  const done = openFromNotification(e.notification);
  // an event the browser dispatched waits for it; one a script dispatched (isTrusted false) may not be extended
  if (e.isTrusted) e.waitUntil(done);
});
