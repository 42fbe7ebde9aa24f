// Retention durations as FLOCK_RETENTION_MESSAGES and FLOCK_RETENTION_MOMENTS take them (runtime/retention/duration.ts):
// the forms accepted, `unlimited`, the sentences that refuse the rest, and the shortest form written back for logs.
import t from "tap";
import { loadConfig } from "../../runtime/config.ts";
import { formatRetention, parseRetention } from "../../runtime/retention/duration.ts";

const S = 1_000;
const M = 60 * S;
const H = 60 * M;
const D = 24 * H;

t.test("accepted forms: a number with a unit, several in a row, any case, spaces around", async (t) => {
  const cases: [string, number][] = [
    ["60s", M],
    ["90s", 90 * S],
    ["10m", 10 * M],
    ["12h", 12 * H],
    ["90d", 90 * D],
    ["2w", 14 * D],
    ["1d12h", 36 * H],
    ["1h30m", 90 * M],
    ["1m30s", 90 * S],
    ["90D", 90 * D],
    [" 10m ", 10 * M],
    ["007m", 7 * M],
  ];
  for (const [text, ms] of cases) t.equal(parseRetention(text), ms, JSON.stringify(text));
});

t.test("unlimited: the word (or forever, or nothing)", async (t) => {
  for (const text of ["unlimited", "UNLIMITED", " unlimited ", "forever", ""])
    t.equal(parseRetention(text), null, JSON.stringify(text));
});

t.test("anything else is refused with a sentence naming the accepted forms", async (t) => {
  for (const bad of [
    "10",
    "m",
    "10x",
    "1.5d",
    "-1d",
    "10 m",
    "1d 12h",
    "10m!",
    "ten minutes",
    "P1D",
    "unlimitedd",
    "1y",
  ]) {
    t.throws(
      () => parseRetention(bad),
      { message: `"${bad}" is not a duration; write it as 90d, 12h, 10m or 30s (or unlimited)` },
      bad,
    );
  }
});

t.test("under a minute is refused: the shortest retention is a minute", async (t) => {
  for (const short of ["30s", "59s", "0m", "0d", "0s"]) {
    t.throws(
      () => parseRetention(short),
      { message: `"${short}" is shorter than a minute, the shortest retention` },
      short,
    );
  }
  t.equal(parseRetention("1m"), M, "a minute itself is accepted");
});

t.test("formatRetention writes the shortest form back, and it parses to the same", async (t) => {
  const cases: [number | null, string][] = [
    [null, "unlimited"],
    [M, "1m"],
    [90 * S, "90s"],
    [10 * M, "10m"],
    [36 * H, "36h"],
    [90 * D, "90d"],
    [14 * D, "2w"],
    [1_500, "1500ms"],
  ];
  for (const [ms, text] of cases) t.equal(formatRetention(ms), text, String(ms));
  for (const ms of [null, M, 90 * S, 36 * H, 90 * D, 14 * D])
    t.equal(parseRetention(formatRetention(ms)), ms, `${ms} round trips`);
});

t.test("the configuration reads both settings with it, unlimited by default", async (t) => {
  const dflt = loadConfig({});
  t.equal(dflt.FLOCK_RETENTION_MOMENTS, null);
  t.equal(dflt.FLOCK_RETENTION_MESSAGES, null);
  const set = loadConfig({ FLOCK_RETENTION_MOMENTS: "10m", FLOCK_RETENTION_MESSAGES: "90d" });
  t.equal(set.FLOCK_RETENTION_MOMENTS, 10 * M);
  t.equal(set.FLOCK_RETENTION_MESSAGES, 90 * D);
  t.throws(
    () => loadConfig({ FLOCK_RETENTION_MOMENTS: "30s" }),
    /FLOCK_RETENTION_MOMENTS: "30s" is shorter than a minute/,
  );
  t.throws(() => loadConfig({ FLOCK_RETENTION_MOMENTS: "soon" }), /FLOCK_RETENTION_MOMENTS: "soon" is not a duration/);
});
