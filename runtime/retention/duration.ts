// Retention durations as people write them: `90d`, `12h`, `10m`, `30s` (or several, `1d12h`), and `unlimited`.
// FLOCK_RETENTION_MESSAGES and FLOCK_RETENTION_MOMENTS are read with it (runtime/config.ts).

const UNIT_MS: Record<string, number> = { s: 1_000, m: 60_000, h: 3_600_000, d: 86_400_000, w: 7 * 86_400_000 };

/** Milliseconds, or null for `unlimited`; throws a sentence naming the accepted forms. */
export function parseRetention(text: string): number | null {
  const v = text.trim().toLowerCase();
  if (v === "unlimited" || v === "forever" || v === "") return null;
  const parts = [...v.matchAll(/(\d+)([smhdw])/g)];
  if (parts.length === 0 || parts.map((p) => p[0]).join("") !== v) {
    throw new Error(`"${text}" is not a duration; write it as 90d, 12h, 10m or 30s (or unlimited)`);
  }
  const ms = parts.reduce((sum, p) => sum + Number(p[1]) * UNIT_MS[p[2]!]!, 0);
  if (ms < 60_000) throw new Error(`"${text}" is shorter than a minute, the shortest retention`);
  return ms;
}

/** `90d`, `2m`: the shortest way to write a retention back, for logs. */
export function formatRetention(ms: number | null): string {
  if (ms === null) return "unlimited";
  for (const u of ["w", "d", "h", "m", "s"]) if (ms % UNIT_MS[u]! === 0) return `${ms / UNIT_MS[u]!}${u}`;
  return `${ms}ms`;
}
