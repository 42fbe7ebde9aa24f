// Browser notifications for messages and friend requests that arrive while the tab is hidden. Off until the person turns them on with
// the button here (which asks the browser's permission); the choice stays in localStorage, and the browser's own
// permission is checked again before each notification. Turning them on also subscribes this browser to Web Push
// (the service worker web/sw.ts, POST /v1/users/me/push-subscriptions), so they arrive with every page closed too;
// where that cannot be had (no push service reachable, a browser without it) the toggle says so.
import type { Flock, Message } from "@flock/client";
import { useState } from "preact/hooks";
import { useApp } from "./context.ts";

const KEY = "flock.notify";

const supported = (): boolean => typeof Notification !== "undefined";

/** True when the person turned notifications on here and the browser still allows them. */
export function notificationsOn(): boolean {
  return supported() && Notification.permission === "granted" && localStorage.getItem(KEY) === "on";
}

/**
 * Shows a message as a system notification when the page is hidden and notifications are on (a click brings the
 * page forward on `open`); answers whether it did.
 */
export function notifyMessage(m: Message, where: string | undefined, open: () => void): boolean {
  const body = m.deleted_at ? "Message deleted" : m.body || (m.attachments?.length ? "(attachment)" : "");
  return notify(where ? `${m.from.display_name} in ${where}` : m.from.display_name, body.slice(0, 200), m.id, open);
}

/** Shows a friend request as a system notification, on the same terms as a message; answers whether it did. */
export function notifyFriendRequest(from: { display_name: string }, requestId: string, open: () => void): boolean {
  return notify(`${from.display_name} wants to be friends`, "Accept or decline on the Friends page.", requestId, open);
}

/** A system notification while the tab is hidden and they are on; a click brings the tab back and opens what it names. */
function notify(title: string, body: string, tag: string, open: () => void): boolean {
  if (document.visibilityState !== "hidden" || !notificationsOn()) return false;
  try {
    const n = new Notification(title, { body, tag });
    n.onclick = () => {
      window.focus();
      open();
      n.close();
    };
    return true;
  } catch {
    // a browser that shows notifications only through a service worker (Chrome on Android) has none to show here
    return false;
  }
}

/** Where the service worker is: the root, so it serves the whole app (handlers/web.ts). */
const WORKER = "/sw.js";

const pushSupported = (): boolean =>
  typeof navigator !== "undefined" && "serviceWorker" in navigator && typeof PushManager !== "undefined";

/** The VAPID key as the bytes pushManager.subscribe takes. */
function keyBytes(base64url: string): Uint8Array<ArrayBuffer> {
  const b64 = base64url.replace(/-/g, "+").replace(/_/g, "/") + "=".repeat((4 - (base64url.length % 4)) % 4);
  const raw = atob(b64);
  const out = new Uint8Array(new ArrayBuffer(raw.length));
  for (let i = 0; i < raw.length; i++) out[i] = raw.charCodeAt(i);
  return out;
}

/** Registers the service worker, subscribes this browser with the server's key and tells the server. */
export async function subscribePush(client: Flock): Promise<void> {
  if (!pushSupported()) throw new Error("this browser has no Web Push");
  await navigator.serviceWorker.register(WORKER);
  const reg = await navigator.serviceWorker.ready;
  const { public_key } = await client.http.request<{ public_key: string }>("GET", "/v1/push/key");
  const sub = await reg.pushManager.subscribe({ userVisibleOnly: true, applicationServerKey: keyBytes(public_key) });
  await client.http.request<unknown>("POST", "/v1/users/me/push-subscriptions", { json: sub.toJSON() });
}

/** Ends this browser's push subscription, here and on the server (best effort: it may have had none). */
export async function unsubscribePush(client: Flock): Promise<void> {
  if (!pushSupported()) return;
  const reg = await navigator.serviceWorker.getRegistration(WORKER);
  const sub = await reg?.pushManager.getSubscription();
  if (!sub) return;
  await client.http
    .request<void>("DELETE", "/v1/users/me/push-subscriptions", { json: { endpoint: sub.endpoint } })
    .catch(() => undefined);
  await sub.unsubscribe();
}

// A click on a pushed notification (web/sw.ts) asks an open page to show what it names: the conversation, or Friends.
if (typeof navigator !== "undefined" && "serviceWorker" in navigator) {
  navigator.serviceWorker.addEventListener("message", (e: MessageEvent<{ type?: unknown; url?: unknown }>) => {
    if (e.data?.type === "flock.open" && typeof e.data.url === "string" && e.data.url.startsWith("#/"))
      location.hash = e.data.url;
  });
}

type Choice = "on" | "off" | "blocked";
const choice = (): Choice => (Notification.permission === "denied" ? "blocked" : notificationsOn() ? "on" : "off");

/** What became of Web Push when notifications were turned on here (null: not tried this time). */
type PushState = { ok: true } | { ok: false; why: string } | "pending" | null;

/** A browser that cannot reach its push service may never settle the subscription: it has failed after this. */
const SUBSCRIBE_TIMEOUT_MS = 20_000;

function withTimeout<T>(p: Promise<T>, ms: number): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error("the browser's push service did not answer")), ms);
    p.then(resolve, reject).finally(() => clearTimeout(timer));
  });
}

/**
 * The switch: "Enable notifications" (asks the browser, then subscribes to Web Push), "Turn off notifications", or why
 * they cannot be had; and, once tried, whether they reach a closed page too.
 */
export function NotifyToggle() {
  const { client } = useApp();
  const [state, setState] = useState<Choice>(() => (supported() ? choice() : "off"));
  const [asking, setAsking] = useState(false);
  const [push, setPush] = useState<PushState>(null);
  if (!supported()) return null;

  async function enable() {
    setAsking(true);
    try {
      if ((await Notification.requestPermission()) === "granted") localStorage.setItem(KEY, "on");
    } finally {
      setAsking(false);
      setState(choice());
    }
    if (choice() !== "on") return;
    // on while a page is open from here; push to closed pages follows when the browser's push service answers
    setPush("pending");
    try {
      await withTimeout(subscribePush(client), SUBSCRIBE_TIMEOUT_MS);
      setPush({ ok: true });
    } catch (err) {
      setPush({ ok: false, why: err instanceof Error && err.message ? err.message : String(err) });
    }
  }

  const pushNote =
    push === null ? null : push === "pending" ? (
      <p class="muted notify" data-push="pending" role="status">
        Setting up notifications for when every Flock page is closed…
      </p>
    ) : push.ok ? (
      <p class="muted notify" data-push="on" role="status">
        Notifications reach you with every Flock page closed, too.
      </p>
    ) : (
      <p class="muted notify" data-push="failed" role="status">
        Notifications work while a Flock page is open, but push to a closed page could not be set up here ({push.why}).
      </p>
    );

  if (state === "blocked")
    return <p class="muted notify">Notifications are blocked for this site in the browser's settings.</p>;
  if (state === "on")
    return (
      <>
        <button
          type="button"
          class="notify"
          data-notify="on"
          onClick={() => {
            localStorage.removeItem(KEY);
            setPush(null);
            setState(choice());
            void unsubscribePush(client).catch(() => undefined);
          }}
        >
          Turn off notifications
        </button>
        {pushNote}
      </>
    );
  return (
    <button type="button" class="notify" data-notify="off" disabled={asking} onClick={() => void enable()}>
      Enable notifications
    </button>
  );
}
