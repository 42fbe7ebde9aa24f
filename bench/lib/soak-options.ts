// The soak's command line: `--minutes`, `--retention 2m|off`, `--window`, and the fleet's size and rates, defaulting to
// what this machine holds (DEFAULTS); FULL is the fleet issue 34 names.
import { parseArgs } from "node:util";
import type { MallocChoice } from "./allocator.ts";
import { formatDuration, parseDuration } from "./duration.ts";
import type { Rates } from "./soak-fleet.ts";
import { SHORT_RUN_S } from "./verdict.ts";

/** The fleet issue 34 names. */
export const FULL = {
  agents: 1000,
  ws: 200,
  polls: 200,
  direct: 500,
  group: 50,
  moments: 5,
  likes: 20,
  comments: 5,
  feeds: 10,
};

/**
 * The defaults: what this 2-core machine holds steadily with the node, its backends and the bench on it (bench/RESULTS.md,
 * "Soak"). On Postgres and Redis, the full fleet (the node used about 45% of a core). Embedded, the node alone runs the
 * database (PGlite) and the engines: at the full fleet it used a whole core and its p99 swung from 70 to 600 ms, so
 * the messages are halved there. The full fleet is always the same flags with FULL's numbers.
 */
export const DEFAULTS = process.env["DATABASE_URL"] ? { ...FULL } : { ...FULL, direct: 250, group: 25 };

/** Seconds between samples. */
export const SAMPLE_S = 10;

export function soakOptions(argv: string[]) {
  const num = (d: number) => ({ type: "string" as const, default: String(d) });
  const { values: a } = parseArgs({
    args: argv,
    options: {
      scenario: { type: "string" },
      url: { type: "string" },
      minutes: { type: "string", default: "10" },
      retention: { type: "string", default: "2m" },
      window: { type: "string" },
      warmup: { type: "string" },
      agents: num(DEFAULTS.agents),
      ws: num(DEFAULTS.ws),
      polls: num(DEFAULTS.polls),
      direct: num(DEFAULTS.direct),
      group: num(DEFAULTS.group),
      groups: num(20),
      "group-size": num(10),
      peers: num(3),
      moments: num(DEFAULTS.moments),
      likes: num(DEFAULTS.likes),
      comments: num(DEFAULTS.comments),
      feeds: num(DEFAULTS.feeds),
      "limits-scale": num(100_000),
      "out-dir": { type: "string", default: "bench/results" },
      malloc: { type: "string", default: "auto" },
    },
  });
  if (!["auto", "system", "jemalloc"].includes(a.malloc!))
    throw new Error(`--malloc must be auto, system or jemalloc (got ${a.malloc})`);
  if (a.url)
    throw new Error(
      "the soak starts its own node (it reads its metrics, schema and key prefix); --url is not supported",
    );
  const n = (k: keyof typeof a) => {
    const v = Number(a[k]);
    if (!Number.isFinite(v) || v < 0) throw new Error(`--${k} must be a number >= 0 (got ${String(a[k])})`);
    return v;
  };
  const retentionMs = a.retention === "off" ? undefined : parseDuration(a.retention!);
  const windowMs = a.window ? parseDuration(a.window) : (retentionMs ?? 60_000);
  if (windowMs < 2 * SAMPLE_S * 1000)
    throw new Error(`the window (${formatDuration(windowMs)}) must be at least ${2 * SAMPLE_S}s`);
  const rates: Rates = {
    direct: n("direct"),
    group: n("group"),
    moments: n("moments"),
    likes: n("likes"),
    comments: n("comments"),
    feeds: n("feeds"),
  };
  return {
    seconds: Math.max(SAMPLE_S, Math.floor((n("minutes") * 60) / SAMPLE_S) * SAMPLE_S),
    retentionMs,
    windowS: windowMs / 1000,
    // retention keeps between one retention and one retention plus a partition's span (a quarter of it, at least a
    // minute: runtime/retention/maintainer.ts spanFor): the kept data is level only after both
    settleS: retentionMs === undefined ? 0 : Math.max(60, Math.floor(retentionMs / 4 / 60_000) * 60),
    // V8 sizes its heap over the first minutes (RSS rose 134 -> 174 MB over minutes 1-8 of a level hour): a run long
    // enough to judge RSS (bench/lib/verdict.ts SHORT_RUN_S) starts after 5 minutes of the same load, a short one after 10 s
    warmupS: a.warmup ? parseDuration(a.warmup) / 1000 : n("minutes") * 60 >= SHORT_RUN_S ? 300 : 10,
    shape: {
      agents: n("agents"),
      ws: n("ws"),
      polls: n("polls"),
      groups: n("groups"),
      groupSize: n("group-size"),
      peers: Math.max(1, n("peers")),
    },
    rates,
    limitsScale: a["limits-scale"]!,
    /** the node's malloc: jemalloc preloaded where installed (auto), or glibc's (system) */
    malloc: a.malloc as MallocChoice,
    outDir: a["out-dir"]!,
  };
}

/** Whether `argv` asks for the soak (`--scenario soak`), which runs alone with options of its own. */
