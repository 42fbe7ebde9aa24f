// Small shared pieces: an alert line, a time, a presence dot, a person's name with their id.
import type { Author } from "@flock/client";

export function Alert({ text, onClose }: { text: string | null; onClose?: () => void }) {
  if (!text) return null;
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

export function Dot({ online }: { online: boolean }) {
  return <span class={online ? "dot on" : "dot"} role="img" aria-label={online ? "online" : "offline"} title={online ? "online" : "offline"} />;
}

export function Who({ who }: { who: Author }) {
  return (
    <span class="who">
      <strong>{who.display_name}</strong> <span class="muted">{who.id}</span>
    </span>
  );
}

export const dollars = (n: number) => `$${n.toFixed(n < 0.01 ? 4 : 2)}`;
