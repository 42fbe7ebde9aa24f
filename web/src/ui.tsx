// Small shared pieces: an alert line (one showing a connection failure clears itself once Flock answers again), a
// time (full, or short for a list), a presence dot, an unread badge, and whether the page is visible now.
import { useEffect, useRef, useState } from "preact/hooks";
import { net } from "./net.ts";
import { unreadText } from "./threads.ts";

export function Alert({ text, onClose }: { text: string | null; onClose?: () => void }) {
  // the connection's recoveries when this text appeared: one more since, and a connection failure is over
  const since = useRef({ text, n: net.recoveries });
  if (since.current.text !== text) since.current = { text, n: net.recoveries };
  const [, rerender] = useState(0);
  useEffect(() => net.on(() => rerender((x) => x + 1)), []);
  const over = text !== null && net.transientTexts.has(text) && net.recoveries > since.current.n;
  useEffect(() => {
    if (over) onClose?.();
  }, [over]);
  if (!text || over) return null;
  return (
    <p class="alert" role="alert">
      {text}
      {onClose && (
        <button type="button" class="link" onClick={onClose} aria-label="Dismiss">
          ×
        </button>
      )}
    </p>
  );
}

export function When({ iso }: { iso: string }) {
  const d = new Date(iso);
  return (
    <time dateTime={iso} title={d.toLocaleString()}>
      {d.toLocaleString(undefined, { month: "short", day: "numeric", hour: "2-digit", minute: "2-digit" })}
    </time>
  );
}

/** A time for a list: the hour today, the day before that. */
export function ShortWhen({ iso }: { iso: string }) {
  const d = new Date(iso);
  const today = d.toDateString() === new Date().toDateString();
  return (
    <time dateTime={iso} title={d.toLocaleString()}>
      {today
        ? d.toLocaleTimeString(undefined, { hour: "2-digit", minute: "2-digit" })
        : d.toLocaleDateString(undefined, { month: "short", day: "numeric" })}
    </time>
  );
}

/** An unread count as a badge ("999+" beyond 999), read out as "3 unread"; nothing for 0. */
export function Unread({ n, total = false }: { n: number; total?: boolean }) {
  if (n <= 0) return null;
  return (
    <span class="badge unread" data-unread={total ? undefined : n} data-unread-total={total ? n : undefined}>
      {unreadText(n)}
      <span class="sr-only"> unread</span>
    </span>
  );
}

/** True while the page is visible (document.visibilityState), updated as the person switches tabs. */
export function useVisible(): boolean {
  const [visible, setVisible] = useState(() => document.visibilityState !== "hidden");
  useEffect(() => {
    const on = () => setVisible(document.visibilityState !== "hidden");
    document.addEventListener("visibilitychange", on);
    return () => document.removeEventListener("visibilitychange", on);
  }, []);
  return visible;
}

export function Dot({ online }: { online: boolean }) {
  return (
    <span
      class={online ? "dot on" : "dot"}
      role="img"
      aria-label={online ? "online" : "offline"}
      title={online ? "online" : "offline"}
    />
  );
}

export const dollars = (n: number) => `$${n.toFixed(n < 0.01 ? 4 : 2)}`;

/**
 * A page's action that is followed by reading the page again: its error (as `fail` words it) shown in the page's
 * alert, and the page read again either way, since the action may have changed what it shows.
 */
export function actThenLoad(
  setError: (text: string | null) => void,
  fail: (err: unknown) => string,
  load: () => Promise<unknown>,
) {
  return async (f: () => Promise<unknown>) => {
    setError(null);
    try {
      await f();
    } catch (err) {
      setError(fail(err));
    }
    await load();
  };
}
