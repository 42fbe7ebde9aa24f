// Durations as the retention settings write them: a whole number and a unit (`90s`, `2m`, `1h`, `90d`).
const UNIT_MS: Record<string, number> = { s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 };

/** Milliseconds of `90s`, `2m`, `1h` or `90d`; throws on anything else. */
export function parseDuration(text: string): number {
  const m = /^(\d+)([smhd])$/.exec(text.trim());
  if (!m || Number(m[1]) <= 0)
    throw new Error(`${JSON.stringify(text)} is not a duration (a whole number and s, m, h or d: 90s, 2m, 1h)`);
  return Number(m[1]) * UNIT_MS[m[2]!]!;
}

/** The shortest exact spelling of `ms` (`2m`, `90s`). */
export function formatDuration(ms: number): string {
  for (const u of ["d", "h", "m"]) if (ms % UNIT_MS[u]! === 0) return `${ms / UNIT_MS[u]!}${u}`;
  return `${Math.round(ms / 1000)}s`;
}
