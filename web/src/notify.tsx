// Browser notifications for messages and friend requests that arrive while the tab is hidden. Off until the person turns them on with
// the button here (which asks the browser's permission); the choice stays in localStorage, and the browser's own
// permission is checked again before each notification.
import type { Message } from "@flock/client";
import { useState } from "preact/hooks";

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

type Choice = "on" | "off" | "blocked";
const choice = (): Choice => (Notification.permission === "denied" ? "blocked" : notificationsOn() ? "on" : "off");

/** The switch: "Enable notifications" (asks the browser), "Turn off notifications", or why they cannot be had. */
export function NotifyToggle() {
  const [state, setState] = useState<Choice>(() => (supported() ? choice() : "off"));
  const [asking, setAsking] = useState(false);
  if (!supported()) return null;

  async function enable() {
    setAsking(true);
    try {
      if ((await Notification.requestPermission()) === "granted") localStorage.setItem(KEY, "on");
    } finally {
      setAsking(false);
      setState(choice());
    }
  }

  if (state === "blocked")
    return <p class="muted notify">Notifications are blocked for this site in the browser's settings.</p>;
  if (state === "on")
    return (
      <button
        type="button"
        class="notify"
        data-notify="on"
        onClick={() => {
          localStorage.removeItem(KEY);
          setState(choice());
        }}
      >
        Turn off notifications
      </button>
    );
  return (
    <button type="button" class="notify" data-notify="off" disabled={asking} onClick={() => void enable()}>
      Enable notifications
    </button>
  );
}
