// `npm run bench -- [--url URL] [--scenario NAME|all] [--agents N] [--duration S] [--connections N] [--out FILE]
// [--unkeyed]` (every request that creates something carries an Idempotency-Key, as the SDK's do; `--unkeyed` sends
// none, for the figures without them: bench/lib/idempotency.ts)
// (`--scenario soak`, `--scenario connections` and `--scenario search` are runs of their own: bench/scenarios/soak.ts,
// connections.ts, search.ts)
// With no --url it starts Flock itself (embedded, or on DATABASE_URL / REDIS_URL), measures the baselines in the
// same run, runs the scenarios (each once the node has worked off what the last left queued: bench/lib/settle.ts),
// prints a table with each scenario's ratio to its baseline, writes the same as JSON, and stops everything it started.
import { execSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { cpus, tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { limitsInForce } from "./lib/fleet.ts";
import { isKeyed, keyedLine, keyedWord, setKeyed } from "./lib/idempotency.ts";
import { load, type LoadResult } from "./lib/load.ts";
import { type Proc, startScript } from "./lib/procs.ts";
import { type Settled, settle } from "./lib/settle.ts";
import type { Scenario, ScenarioContext, ScenarioResult } from "./lib/scenario.ts";
import { feed, hot, like, post, send } from "./scenarios/http.ts";
import { idle } from "./scenarios/idle.ts";
import { mixed } from "./scenarios/mixed.ts";
import { deliver, group, webhook, ws, wsBaseline } from "./scenarios/realtime.ts";

// the soak and the held connections at scale are runs of their own, with nodes and options of their own
// (bench/scenarios/soak.ts, connections.ts)
const OWN_RUNS: Record<string, () => Promise<(argv: string[]) => Promise<number>>> = {
  soak: async () => (await import("./scenarios/soak.ts")).soakMain,
  connections: async () => (await import("./scenarios/connections.ts")).connectionsMain,
  search: async () => (await import("./scenarios/search.ts")).searchMain,
};
// --unkeyed holds for every run, the own runs too (their options are theirs: it is taken out before they see them)
const argv = process.argv.slice(2).filter((arg) => arg !== "--unkeyed");
setKeyed(argv.length === process.argv.length - 2);
const requested = parseArgs({
  args: argv,
  options: { scenario: { type: "string" } },
  strict: false,
  allowPositionals: true,
}).values.scenario;
const ownRun = typeof requested === "string" ? OWN_RUNS[requested] : undefined;
if (ownRun) {
  const main = await ownRun();
  process.stderr.write(`[bench] ${keyedLine()}\n`);
  process.exit(
    await main(argv).catch((err: Error) => {
      process.stderr.write(`[${String(requested)}] failed: ${err.stack}\n`);
      return 2;
    }),
  );
}

const { values: a } = parseArgs({
  args: argv,
  options: {
    url: { type: "string" },
    scenario: { type: "string", default: "all" },
    agents: { type: "string", default: "100" },
    duration: { type: "string", default: "10" },
    connections: { type: "string", default: "50" },
    out: { type: "string", default: "bench/results.json" },
    "limits-scale": { type: "string", default: "100000" },
  },
});

const progress = (msg: string) => process.stderr.write(`[bench] ${msg}\n`);
const started: Proc[] = [];
let dataDir: string | undefined;

async function main() {
  const opts = { agents: Number(a.agents), duration: Number(a.duration), connections: Number(a.connections) };
  let url = a.url;
  let flock: Proc | undefined;
  const env: Record<string, string> = {
    PORT: "0",
    HOST: "127.0.0.1",
    LOG_LEVEL: "info",
    FLOCK_LIMITS_SCALE: a["limits-scale"]!,
    // the webhook scenario's endpoints are on this machine
    FLOCK_WEBHOOK_ALLOW_PRIVATE: "1",
  };
  // read between scenarios (settle): a node the bench started answers its /metrics to this token
  const metricsToken = a.url ? undefined : (env["FLOCK_METRICS_TOKEN"] = randomBytes(24).toString("hex"));
  const startFlock = async () => {
    // what npm start runs: the compiled JavaScript (npm run build:server), with no TypeScript loader in the process
    flock = await startScript("dist/runtime/main.js", env, /"port":(\d+)[^\n]*"msg":"flock listening"/);
    started.push(flock);
    return `http://127.0.0.1:${flock.port}`;
  };
  if (!url) {
    if (!process.env["DATABASE_URL"]) env["DATA_DIR"] = dataDir = mkdtempSync(join(tmpdir(), "flock-bench-"));
    progress(
      `starting flock (${process.env["DATABASE_URL"] ? "Postgres" : "embedded"} + ${process.env["REDIS_URL"] ? "Redis" : "memory engines"}, limits x${a["limits-scale"]}, ${keyedWord()})`,
    );
    url = await startFlock();
  }
  const wsUrl = `${url.replace(/^http/, "ws")}/v1/ws`;
  const limits = await limitsInForce(url);

  const all: Scenario[] = [
    feed,
    like,
    post,
    send,
    hot,
    deliver,
    ws,
    webhook,
    group,
    idle(() => flock?.child.pid),
    mixed,
  ];
  const chosen = a.scenario === "all" ? all : all.filter((s) => a.scenario!.split(",").includes(s.name));
  if (chosen.length === 0)
    throw new Error(`unknown scenario ${a.scenario}; one of ${all.map((s) => s.name).join(", ")}`);

  progress("baseline: bare uWebSockets.js, 1 KB JSON");
  const httpBase = await startScript("bench/baseline-http.ts", {}, /"port":(\d+)/);
  started.push(httpBase);
  const httpBaseline = await load({
    url: `http://127.0.0.1:${httpBase.port}`,
    connections: opts.connections,
    duration: opts.duration,
    next: () => ({ method: "GET", path: "/" }),
  });
  await httpBase.stop();
  let wsBaselineResult: (Awaited<ReturnType<typeof wsBaseline>> & { rps: number }) | undefined;
  if (chosen.some((s) => s.name === "group" || s.name === "ws")) {
    progress("baseline: bare uWebSockets.js pub/sub to 999 clients");
    const wsBase = await startScript("bench/baseline-ws.ts", {}, /"port":(\d+)/);
    started.push(wsBase);
    const r = await wsBaseline(`ws://127.0.0.1:${wsBase.port}`, 999, opts.duration);
    wsBaselineResult = { ...r, rps: r.requests / opts.duration };
    await wsBase.stop();
  }

  const ctx: ScenarioContext = { url, wsUrl, ...opts, progress };
  if (flock) {
    ctx.freshNode = async () => {
      progress("restarting flock: a fresh process, same database and Redis");
      await flock?.stop();
      ctx.url = await startFlock();
      ctx.wsUrl = `${ctx.url.replace(/^http/, "ws")}/v1/ws`;
    };
  }
  const results: Record<string, ScenarioResult & { ratio: number | null }> = {};
  const settled: Record<string, Settled> = {};
  for (const s of chosen) {
    if (metricsToken) {
      // the last scenario's acks and sends still queued would be this one's wait (group leaves tens of thousands)
      const q = (settled[s.name] = await settle(ctx.url, metricsToken));
      if (q.acks + q.sends > 0)
        progress(
          `waited ${q.ms} ms for ${q.acks} acks and ${q.sends} sends still queued${q.empty ? "" : " (gave up)"}`,
        );
    }
    progress(`scenario ${s.name}: ${s.description}`);
    try {
      const r = await s.run(ctx);
      const base = r.baseline === "ws" ? wsBaselineResult?.rps : httpBaseline.rps;
      results[s.name] = { ...r, ratio: base ? r.rps / base : null };
    } catch (err) {
      progress(`scenario ${s.name} failed: ${(err as Error).stack}`);
    }
  }

  const report = {
    date: new Date().toISOString(),
    commit: safe(() =>
      execSync("git rev-parse --short HEAD", { stdio: ["ignore", "pipe", "ignore"] })
        .toString()
        .trim(),
    ),
    machine: `${cpus().length} x ${cpus()[0]?.model ?? "cpu"}, node ${process.version}`,
    target: a.url
      ? a.url
      : `flock started by the bench (${process.env["DATABASE_URL"] ? "Postgres" : "embedded PGlite"}, ${process.env["REDIS_URL"] ? "Redis" : "memory engines"})`,
    limits: `register policy in force: ${limits}`,
    options: opts,
    /** Whether the creating requests carried an Idempotency-Key (`--unkeyed`: none). */
    keyed: isKeyed(),
    baselines: { http: brief(httpBaseline), ws: wsBaselineResult ? brief(wsBaselineResult) : null },
    scenarios: results,
    /** Before each scenario: what the node still held queued from the last one, and how long the wait for it took. */
    settled,
  };
  writeFileSync(a.out!, `${JSON.stringify(report, null, 2)}\n`);
  process.stdout.write(`${keyedLine()}\n`);
  process.stdout.write(table(report.baselines, results));
  progress(`wrote ${a.out}`);
}

function brief(r: Pick<LoadResult, "rps" | "p50" | "p90" | "p99" | "max">) {
  return { rps: Math.round(r.rps), p50: r.p50, p90: r.p90, p99: r.p99, max: r.max };
}

function table(
  base: { http: ReturnType<typeof brief>; ws: ReturnType<typeof brief> | null },
  rs: Record<string, ScenarioResult & { ratio: number | null }>,
): string {
  const rows = [
    ["scenario", "throughput", "p50 ms", "p90 ms", "p99 ms", "max ms", "statuses", "errors", "ratio", "target"],
  ];
  rows.push([
    "baseline http",
    `${base.http.rps} req/s`,
    f(base.http.p50),
    f(base.http.p90),
    f(base.http.p99),
    f(base.http.max),
    "",
    "",
    "1.00",
    "",
  ]);
  if (base.ws)
    rows.push([
      "baseline ws",
      `${base.ws.rps} deliveries/s`,
      f(base.ws.p50),
      f(base.ws.p90),
      f(base.ws.p99),
      f(base.ws.max),
      "",
      "",
      "1.00",
      "",
    ]);
  for (const [name, r] of Object.entries(rs)) {
    rows.push([
      name,
      `${Math.round(r.rps)} ${r.unit}`,
      f(r.p50),
      f(r.p90),
      f(r.p99),
      f(r.max),
      Object.entries(r.statuses)
        .map(([k, v]) => `${k}:${v}`)
        .join(" "),
      String(r.errors),
      r.ratio === null ? "-" : r.ratio.toFixed(2),
      r.target,
    ]);
  }
  const widths = rows[0]!.map((_, i) => Math.max(...rows.map((row) => row[i]!.length)));
  const lines = rows.map((row) => row.map((c, i) => c.padEnd(widths[i]!)).join("  "));
  const notes = Object.entries(rs)
    .filter(([, r]) => r.notes)
    .map(([n, r]) => `  ${n}: ${r.notes}`);
  return `${lines.join("\n")}\n${notes.length ? `notes:\n${notes.join("\n")}\n` : ""}`;
}

const f = (n: number) => (Math.round(n * 100) / 100).toString();
function safe<T>(fn: () => T): T | null {
  try {
    return fn();
  } catch {
    return null;
  }
}

async function cleanup() {
  for (const p of started.reverse()) await p.stop().catch(() => {});
  if (dataDir) rmSync(dataDir, { recursive: true, force: true });
}

process.once("SIGINT", () => void cleanup().then(() => process.exit(130)));
main()
  .then(cleanup, async (err) => {
    progress(`failed: ${(err as Error).stack}`);
    await cleanup();
    process.exitCode = 1;
  })
  .then(() => process.exit());
