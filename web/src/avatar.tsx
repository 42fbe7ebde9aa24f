// A principal's picture: the image at its avatar_url (a path on the API that needs no credentials), or its initials
// on a colour taken from its id when it has none (or the image fails to load). The newest picture the app has seen
// for the id (names.tsx) wins over the one in the object given, which may be older (a message received before the
// sender changed it). Decorative beside a name (hidden from
// screen readers); `label` names it where it stands alone.
import { useContext, useState } from "preact/hooks";
import { App } from "./context.ts";

export interface Pictured {
  id: string;
  display_name: string;
  avatar_url?: string | null;
}

/**
 * Up to two initials: the first character of the first two words ("Ada Lovelace" → "AL"); a wallet address's name
 * gives the two characters after its 0x ("0x3C44…93BC" → "3C"), where every one would start with "0".
 */
export function initials(name: string): string {
  const hex = /^0x([0-9a-f]{2})/i.exec(name.trim());
  if (hex?.[1]) return hex[1].toUpperCase();
  const words = name.trim().split(/\s+/).filter(Boolean);
  return words
    .slice(0, 2)
    .map((w) => [...w][0] ?? "")
    .join("")
    .toUpperCase();
}

/** A hue for an id, the same everywhere it is shown. */
function hue(id: string): number {
  let h = 0;
  for (const c of id) h = (h * 31 + c.charCodeAt(0)) % 360;
  return h;
}

export function Avatar({
  who,
  size = 32,
  label,
  latest = true,
}: {
  who: Pictured;
  size?: number;
  label?: string;
  latest?: boolean;
}) {
  const app = useContext(App);
  const [broken, setBroken] = useState<string | null>(null);
  const base = (app?.session.api ?? location.origin).replace(/\/+$/, "");
  const known = latest ? app?.people.known.get(who.id) : undefined;
  const url = known ? known.avatar_url : who.avatar_url;
  const src = url ? (/^https?:/.test(url) ? url : base + url) : null;
  const style = { width: `${size}px`, height: `${size}px`, fontSize: `${Math.round(size * 0.42)}px` };
  if (src && broken !== src) {
    return (
      <img
        class="avatar"
        src={src}
        alt={label ?? ""}
        aria-hidden={label ? undefined : true}
        style={style}
        data-avatar={who.id}
        onError={() => setBroken(src)}
      />
    );
  }
  return (
    <span
      class="avatar initials"
      style={{ ...style, background: `hsl(${hue(who.id)} 45% 34%)` }}
      data-avatar={who.id}
      data-initials=""
      role={label ? "img" : undefined}
      aria-label={label}
      aria-hidden={label ? undefined : true}
    >
      {initials(who.display_name) || "?"}
    </span>
  );
}
