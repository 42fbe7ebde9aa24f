// The soak's verdict (bench/lib/verdict.ts): growth over the run judged from medians of windows (RSS from their floors), p99 ratios, and the
// short run's unjudged RSS and p99 (reported with "~").
import t from "tap";
import type { SoakSample } from "../../bench/lib/soak-sample.ts";
import { verdict, type VerdictInput, type WindowLatency } from "../../bench/lib/verdict.ts";

/** Samples every 10 s for `seconds`, each figure level unless `grow` says by how much it ends above its start. */
function run(
  seconds: number,
  windowS: number,
  grow: { rss?: number; schema?: number } = {},
  p99 = [100, 100],
): VerdictInput {
  const rows: SoakSample[] = [];
  for (let s = 10; s <= seconds; s += 10) {
    const f = s / seconds;
    rows.push({
      t: s,
      rssMb: 200 * (1 + (grow.rss ?? 0) * f),
      schemaMb: 20 * (1 + (grow.schema ?? 0) * f),
      redisNodeMb: 6,
    } as SoakSample);
  }
  const q = (p: number) => ({ p50: p / 2, p99: p }) as WindowLatency["send"];
  const windows: WindowLatency[] = [];
  for (let from = 0, i = 0; from < seconds; from += windowS, i++) {
    const p = p99[Math.min(i, p99.length - 1)]!;
    windows.push({ from, to: from + windowS, send: q(p), deliver: q(p) });
  }
  return {
    rows,
    windowS,
    settleS: 60,
    windows,
    redis: true,
    expected: 1000,
    received: 1000,
    lost: 0,
    sends: 1000,
    sendErrors: 0,
    offered: 1000,
    fired: 1000,
  };
}

t.test("a level run passes; RSS growing 20% over an hour fails", async (t) => {
  t.ok(verdict(run(3600, 900)).pass);
  const v = verdict(run(3600, 900, { rss: 0.2 }));
  t.notOk(v.pass);
  t.match(v.line, /!RSS \+\d+\.\d%.* -- failed: RSS/);
});

t.test("RSS is judged by the windows' floors: a swinging young heap passes, a rising floor fails", async (t) => {
  // every third sample low (after a scavenge), the rest up to 30% higher, more so at the end: the floor is level
  const swing = run(3600, 120);
  swing.rows.forEach((r, i) => (r.rssMb = i % 3 === 0 ? 180 : 180 * (1.1 + (0.2 * r.t) / 3600)));
  const v = verdict(swing);
  t.ok(v.pass, v.line);
  t.match(v.line, /RSS \+0\.0% \(floor 180\.0 -> 180\.0 MB\)/);
  // the same swings over a floor that rises 8%
  const leak = run(3600, 120);
  leak.rows.forEach((r, i) => (r.rssMb = (i % 3 === 0 ? 180 : 200) * (1 + (0.08 * r.t) / 3600)));
  const l = verdict(leak);
  t.notOk(l.pass);
  t.match(l.line, /failed: RSS/);
});

t.test(
  "a 4-minute run reports RSS and p99 unjudged, and still fails on the schema, a loss or load not held",
  async (t) => {
    const v = verdict(run(240, 60, { rss: 0.2 }, [100, 160]));
    t.ok(v.pass, v.line);
    t.match(v.line, /~RSS \+.*~send p99 x1\.60.*\(~: reported, not judged in a run under 10 minutes\)/);
    const schema = verdict(run(240, 60, { schema: 0.5 }));
    t.notOk(schema.pass);
    t.match(schema.line, /failed: schema/);
    t.notOk(verdict({ ...run(240, 60), lost: 1 }).pass);
    t.notOk(verdict({ ...run(240, 60), fired: 900 }).pass);
  },
);

t.test("a run too short to compare fails", async (t) => {
  t.match(
    verdict(run(180, 60)).line,
    /VERDICT FAIL: !run of 180s is shorter than three windows and the settling \(240s\)/,
  );
});
