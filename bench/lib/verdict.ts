// The soak's verdict. With W the window (the retention, or --window without one) and T the run's length:
// - growth: for the Redis memory of the node's own keys and the schema size, the median of the samples of the last
//   window (T-W, T] against the median of the first window after retention has settled [W+S, 2W+S) must be below +5%
//   (S: a partition's span, the most retention keeps beyond W; the median of a window, since dropped partitions make
//   each a saw-tooth and one sample can spike). For node RSS the same windows' floors (their lowest sample): RSS swings
//   by a third with the size V8 gives its young heap (2-minute medians of one level hour moved 180-256 MB while the
//   floors stayed 178-188 MB), and what a leak keeps lifts the floor;
// - latency: the p99 of sends and of deliveries over each later window (of at least half W) within 1.5x of the first
//   window's [0, W);
// - nothing lost: every receipt an accepted send expected came;
// - and, so that a pass means the load was there: at most 0.1% of sends failed, and at least 95% of the offered calls
//   were made (the rest were over the driver's bound on calls in flight).
// A run shorter than SHORT_RUN_S (CI's 4 minutes) reports RSS growth and the p99 ratios without judging them: the
// node's heap and allocator still grow to their working size in the first minutes (+9-12% RSS from minute 2-3 to
// minute 4 in runs whose every other figure was level), and one-minute p99 windows on a shared 2-core machine moved
// by 1.55-1.59x in a run with nothing else wrong. It still fails on growth of the schema or of Redis (retention not
// keeping up), on anything lost, on send errors and on load not held.
import type { Quantiles } from "./deliveries.ts";
import type { SoakSample } from "./soak-sample.ts";

export const GROWTH_LIMIT = 0.05;
export const P99_LIMIT = 1.5;
/** Runs shorter than this (seconds) report RSS growth and p99 ratios, unjudged. */
export const SHORT_RUN_S = 600;

export interface WindowLatency {
  /** seconds the window started and ended */
  from: number;
  to: number;
  send: Quantiles;
  deliver: Quantiles;
}

export interface VerdictInput {
  rows: SoakSample[];
  windowS: number;
  /** Seconds after the first window until what retention keeps is level (a partition's span; 0 without retention). */
  settleS: number;
  windows: WindowLatency[];
  redis: boolean;
  expected: number;
  received: number;
  lost: number;
  sends: number;
  sendErrors: number;
  offered: number;
  fired: number;
}

export interface Check {
  name: string;
  ok: boolean;
  text: string;
  /** false: reported only (a short run), shown with "~" and never failing the verdict */
  judged?: boolean;
}

const pct = (x: number) => `${x >= 0 ? "+" : ""}${(x * 100).toFixed(1)}%`;

/** `pick` over rows with from <= t < to (from exclusive and to inclusive when `last`), sorted, finite only. */
function within(
  rows: SoakSample[],
  pick: (s: SoakSample) => number,
  from: number,
  to: number,
  last: boolean,
): number[] {
  return rows
    .filter((r) => (last ? r.t > from && r.t <= to : r.t >= from && r.t < to))
    .map(pick)
    .filter(Number.isFinite)
    .sort((a, b) => a - b);
}

/** Median of `pick` over a window (see within). */
function median(rows: SoakSample[], pick: (s: SoakSample) => number, from: number, to: number, last = false): number {
  const vs = within(rows, pick, from, to, last);
  if (vs.length === 0) return NaN;
  const mid = vs.length >> 1;
  return vs.length % 2 ? vs[mid]! : (vs[mid - 1]! + vs[mid]!) / 2;
}

/** Lowest `pick` over a window (see within). */
function floor(rows: SoakSample[], pick: (s: SoakSample) => number, from: number, to: number, last = false): number {
  return within(rows, pick, from, to, last)[0] ?? NaN;
}

export function verdict(v: VerdictInput): { pass: boolean; checks: Check[]; line: string } {
  const checks: Check[] = [];
  const T = v.rows.at(-1)?.t ?? 0;
  const W = v.windowS;
  const S = v.settleS;
  const short = T < SHORT_RUN_S;
  if (T < 3 * W + S) {
    checks.push({
      name: "length",
      ok: false,
      text: `run of ${T}s is shorter than three windows and the settling (${3 * W + S}s): nothing to compare`,
    });
  } else {
    const growth: [string, (s: SoakSample) => number, typeof median][] = [
      ["RSS", (s) => s.rssMb, floor],
      ["schema", (s) => s.schemaMb, median],
    ];
    if (v.redis) growth.splice(1, 0, ["redis keys", (s) => s.redisNodeMb, median]);
    for (const [name, pick, read] of growth) {
      const ref = read(v.rows, pick, W + S, 2 * W + S);
      const end = read(v.rows, pick, T - W, T, true);
      const g = end / ref - 1;
      const ok = Number.isFinite(g) && g < GROWTH_LIMIT;
      checks.push({
        name,
        ok,
        judged: !(short && name === "RSS"),
        text: `${name} ${Number.isFinite(g) ? pct(g) : "n/a"} (${read === floor ? "floor " : ""}${ref.toFixed(1)} -> ${end.toFixed(1)} MB)`,
      });
    }
  }
  const [first, ...later] = v.windows;
  if (first) {
    for (const kind of ["send", "deliver"] as const) {
      const base = first[kind].p99;
      const worst = later.reduce((m, w) => Math.max(m, w[kind].p99), 0);
      const ratio = later.length ? worst / base : NaN;
      const ok = later.length > 0 && base > 0 && ratio <= P99_LIMIT;
      checks.push({
        name: `${kind} p99`,
        ok,
        judged: !short,
        text: `${kind} p99 x${Number.isFinite(ratio) ? ratio.toFixed(2) : "n/a"} (${base.toFixed(1)} -> worst ${worst.toFixed(1)} ms)`,
      });
    }
  }
  checks.push({ name: "lost", ok: v.lost === 0 && v.expected > 0, text: `lost ${v.lost} of ${v.expected} receipts` });
  const errRate = v.sends ? v.sendErrors / v.sends : 1;
  checks.push({ name: "send errors", ok: errRate <= 0.001, text: `send errors ${v.sendErrors}` });
  const held = v.offered ? v.fired / v.offered : 0;
  checks.push({ name: "load", ok: held >= 0.95, text: `load held ${(held * 100).toFixed(1)}%` });
  const counted = checks.filter((c) => c.judged !== false);
  const pass = counted.every((c) => c.ok);
  const failed = counted.filter((c) => !c.ok).map((c) => c.name);
  const mark = (c: Check) => (c.judged === false ? "~" : c.ok ? "" : "!");
  const unjudged =
    checks.length > counted.length ? ` (~: reported, not judged in a run under ${SHORT_RUN_S / 60} minutes)` : "";
  const line = `VERDICT ${pass ? "PASS" : "FAIL"}: ${checks.map((c) => `${mark(c)}${c.text}`).join("; ")}${unjudged}${failed.length ? ` -- failed: ${failed.join(", ")}` : ""}`;
  return { pass, checks, line };
}
