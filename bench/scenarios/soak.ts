// `npm run bench -- --scenario soak --minutes N [--retention 2m|off] [fleet flags]`: a steady mixed fleet against a
// node of its own (started as bench/run.ts starts one, with FLOCK_RETENTION_MESSAGES, FLOCK_RETENTION_MOMENTS and
// FLOCK_IDEMPOTENCY_WINDOW set to --retention), on a fresh schema and key prefix (bench/lib/isolation.ts). Every 10 s
// it reads the node's memory and lag, Redis and Postgres (bench/lib/sampler.ts) and the latencies of the last 10 s;
// it writes a CSV, a PNG of charts and a JSON summary into bench/results/, prints the table and ends with one verdict
// line (bench/lib/verdict.ts). The exit code is 1 when the verdict fails.
import { randomBytes } from "node:crypto";
import { existsSync, mkdirSync, writeFileSync } from "node:fs";
import { cpus } from "node:os";
import { join } from "node:path";
import { monitorEventLoopDelay } from "node:perf_hooks";
import { writeSoakPng } from "../lib/charts.ts";
import { Deliveries } from "../lib/deliveries.ts";
import { formatDuration } from "../lib/duration.ts";
import { isKeyed } from "../lib/idempotency.ts";
import { isolate, type Isolation } from "../lib/isolation.ts";
import { cpuMs, type Proc, ROOT, startScript } from "../lib/procs.ts";
import { readProcMemory } from "../lib/proc-memory.ts";
import { mallocEnv, runsJemalloc } from "../lib/allocator.ts";
import { RssReader } from "../lib/rss-reader.ts";
import {
  type DbReading,
  embeddedDbReading,
  PostgresSampler,
  readNodeMetrics,
  RedisSampler,
  type RedisReading,
} from "../lib/sampler.ts";
import { RATE_NAMES, type Rates, SoakFleet } from "../lib/soak-fleet.ts";
import { DEFAULTS, FULL, SAMPLE_S, soakOptions } from "../lib/soak-options.ts";
import { type SoakSample, toCsv, toTable } from "../lib/soak-sample.ts";
import { verdict, type WindowLatency } from "../lib/verdict.ts";

const DRAIN_MS = 30_000;
const MB = 1024 * 1024;

const progress = (msg: string) => process.stderr.write(`[soak] ${msg}\n`);

export async function soakMain(argv: string[]): Promise<number> {
  const o = soakOptions(argv);
  if (!existsSync(join(ROOT, "dist/runtime/main.js")))
    throw new Error("dist/runtime/main.js is missing: run npm run build:server first");
  const scaled = (Object.keys(FULL) as (keyof typeof FULL)[]).filter((k) => DEFAULTS[k] !== FULL[k]);
  if (scaled.length) {
    progress(
      `defaults scaled to what this machine holds: ${scaled.map((k) => `--${k} ${DEFAULTS[k]}`).join(" ")}; the issue's full fleet: ${scaled.map((k) => `--${k} ${FULL[k]}`).join(" ")}`,
    );
  }
  let iso: Isolation | undefined;
  let node: Proc | undefined;
  let fleet: SoakFleet | undefined;
  const closers: (() => unknown)[] = [];
  const cleanup = async () => {
    fleet?.stop();
    for (const c of closers) await Promise.resolve(c()).catch(() => {});
    await node?.stop().catch(() => {});
    if (iso)
      for (const line of await iso.release().catch((e: Error) => [`cleanup failed: ${e.message}`])) progress(line);
    iso = undefined;
  };
  const onSigint = () => void cleanup().then(() => process.exit(130));
  process.once("SIGINT", onSigint);
  try {
    iso = await isolate("soak");
    const token = randomBytes(24).toString("hex");
    const env: Record<string, string> = {
      PORT: "0",
      HOST: "127.0.0.1",
      LOG_LEVEL: "info",
      FLOCK_LIMITS_SCALE: o.limitsScale,
      FLOCK_METRICS_TOKEN: token,
      ...iso.env,
    };
    delete process.env["FLOCK_RETENTION_MESSAGES"];
    delete process.env["FLOCK_RETENTION_MOMENTS"];
    delete process.env["FLOCK_IDEMPOTENCY_WINDOW"];
    // the fleet sends an Idempotency-Key with every create, as the SDK does: under retention the keys are kept as
    // long as what they made (a minute at least), so that what is kept can level within the run (kept for their
    // default 24 hours, the keys alone would grow the schema through any soak shorter than a day)
    if (o.retentionMs !== undefined)
      env["FLOCK_RETENTION_MESSAGES"] =
        env["FLOCK_RETENTION_MOMENTS"] =
        env["FLOCK_IDEMPOTENCY_WINDOW"] =
          formatDuration(o.retentionMs);
    const retention = o.retentionMs === undefined ? "off" : formatDuration(o.retentionMs);
    const malloc = mallocEnv(o.malloc);
    progress(`starting flock (${iso.describe}; retention ${retention}; malloc ${malloc.name})`);
    node = await startScript(
      "dist/runtime/main.js",
      { ...env, ...malloc.env },
      /"port":(\d+)[^\n]*"msg":"flock listening"/,
    );
    if ((malloc.name === "jemalloc") !== runsJemalloc(node.child.pid!))
      throw new Error(`the node does not run the malloc asked for (${malloc.name})`);
    const url = `http://127.0.0.1:${node.port}`;
    const pid = node.child.pid!;
    // the node's RSS every second; a sample reports the median since the one before (bench/lib/rss-reader.ts)
    const rss = new RssReader(pid);
    closers.push(() => rss.stop());

    const redis = iso.redisUrl && iso.redisPrefix ? new RedisSampler(iso.redisUrl, iso.redisPrefix) : undefined;
    const pg = iso.databaseUrl ? new PostgresSampler(iso.databaseUrl, iso.schema) : undefined;
    if (redis) closers.push(() => redis.close());
    if (pg) closers.push(() => pg.close());
    const readDb = (): Promise<DbReading> => (pg ? pg.read() : Promise.resolve(embeddedDbReading(iso!.dataDir!)));

    const deliveries = new Deliveries();
    fleet = await SoakFleet.setup(url, `ws://127.0.0.1:${node.port}/v1/ws`, o.shape, deliveries, progress);
    await fleet.startReceivers(progress);

    const f = fleet;
    const rows: SoakSample[] = [];
    const windows: WindowLatency[] = [];
    const benchLag = monitorEventLoopDelay({ resolution: 10 });
    benchLag.enable();
    const rateText = RATE_NAMES.map((k) => `${k} ${o.rates[k]}/s`).join(", ");
    progress(
      `running ${o.warmupS}s of warm-up, then ${o.seconds}s: ${rateText}; ${o.shape.ws} WebSockets, ${o.shape.polls} long polls; window ${o.windowS}s`,
    );
    // a warm-up at the same rates first (threads made, code compiled, pools filled), outside every window and sample
    const driving = f.drive(o.rates, o.warmupS + o.seconds);
    await new Promise((r) => setTimeout(r, o.warmupS * 1000));
    const started = performance.now();
    rss.take(); // the readings of the warm-up do not count
    f.sendLatency.takeSample();
    f.sendLatency.takeWindow();
    deliveries.latency.takeSample();
    deliveries.latency.takeWindow();
    benchLag.reset();
    const firedAtStart = { ...f.fired };
    let prev = {
      at: started,
      fired: { ...f.fired },
      received: deliveries.received,
      nodeCpu: cpuMs(pid),
      benchCpu: process.cpuUsage(),
    };
    let windowStart = 0;
    const takeWindow = (to: number) => {
      windows.push({
        from: windowStart,
        to,
        send: f.sendLatency.takeWindow(),
        deliver: deliveries.latency.takeWindow(),
      });
      windowStart = to;
    };
    for (let k = 1; k * SAMPLE_S <= o.seconds; k++) {
      await new Promise((r) => setTimeout(r, Math.max(0, started + k * SAMPLE_S * 1000 - performance.now())));
      const t = k * SAMPLE_S;
      const [m, r, db] = await Promise.all([
        readNodeMetrics(url, token).catch((e: Error) => (progress(`metrics: ${e.message}`), undefined)),
        redis
          ? redis.read().catch((e: Error) => (progress(`redis: ${e.message}`), undefined))
          : Promise.resolve<RedisReading | undefined>(undefined),
        readDb().catch((e: Error) => (progress(`postgres: ${e.message}`), undefined)),
      ]);
      const now = performance.now();
      const dt = (now - prev.at) / 1000;
      const per = (kind: keyof Rates) => (f.fired[kind] - prev.fired[kind]) / dt;
      const send = f.sendLatency.takeSample();
      const deliver = deliveries.latency.takeSample();
      const nodeCpu = cpuMs(pid);
      const proc = readProcMemory(pid);
      const benchCpu = process.cpuUsage();
      const failed = (kind: "direct" | "group") =>
        Object.entries(f.statuses[kind]).reduce((x, [st, c]) => (st === "201" ? x : x + c), 0);
      const errors = failed("direct") + failed("group");
      const row: SoakSample = {
        t,
        rssMb: rss.take() / MB,
        heapUsedMb: (m?.heapUsedBytes ?? NaN) / MB,
        heapTotalMb: (m?.heapTotalBytes ?? NaN) / MB,
        externalMb: (m?.externalBytes ?? NaN) / MB,
        oldSpaceMb: (m?.oldSpaceBytes ?? NaN) / MB,
        newSpaceMb: (m?.newSpaceBytes ?? NaN) / MB,
        mallocHeapMb: (proc?.mallocHeapBytes ?? NaN) / MB,
        anonMb: (proc?.anonBytes ?? NaN) / MB,
        redisUsedMb: (r?.usedMemory ?? NaN) / MB,
        redisKeys: r?.nodeKeys ?? NaN,
        redisNodeMb: (r?.nodeBytes ?? NaN) / MB,
        dbMb: (db?.databaseBytes ?? NaN) / MB,
        schemaMb: (db?.schemaBytes ?? NaN) / MB,
        tables: (db?.tables ?? []).map((x) => `${x.name}:${(x.bytes / MB).toFixed(1)}`).join(" "),
        directPerS: per("direct"),
        groupPerS: per("group"),
        socialPerS: per("moments") + per("likes") + per("comments") + per("feeds"),
        deliveredPerS: (deliveries.received - prev.received) / dt,
        sendP50: send.p50,
        sendP99: send.p99,
        deliverP50: deliver.p50,
        deliverP99: deliver.p99,
        outstanding: deliveries.outstanding(),
        overdue: deliveries.overdue(10_000),
        sendErrors: errors,
        lagP99Ms: (m?.lagP99 ?? NaN) * 1000,
        lagMaxMs: (m?.lagMax ?? NaN) * 1000,
        nodeCpu: (nodeCpu - prev.nodeCpu) / 10 / dt,
        benchCpu: (benchCpu.user + benchCpu.system - prev.benchCpu.user - prev.benchCpu.system) / 1000 / 10 / dt,
        benchLagP99Ms: benchLag.percentile(99) / 1e6,
      };
      benchLag.reset();
      rows.push(row);
      prev = { at: now, fired: { ...f.fired }, received: deliveries.received, nodeCpu, benchCpu };
      progress(
        `t=${t}s rss ${row.rssMb.toFixed(0)} MB, heap ${row.heapUsedMb.toFixed(0)} MB, schema ${row.schemaMb.toFixed(1)} MB` +
          `${redis ? `, redis keys ${row.redisKeys} / ${row.redisNodeMb.toFixed(2)} MB` : ""}; ${row.directPerS.toFixed(0)} msg/s, ` +
          `${row.groupPerS.toFixed(0)} grp/s, ${row.deliveredPerS.toFixed(0)} recv/s; send p99 ${row.sendP99.toFixed(1)} ms, ` +
          `delivery p99 ${row.deliverP99.toFixed(1)} ms; lag p99 ${row.lagP99Ms.toFixed(1)} ms; node cpu ${row.nodeCpu.toFixed(0)}%; waiting ${row.outstanding}`,
      );
      if (t >= windowStart + o.windowS) takeWindow(t);
    }
    await driving;
    progress(`sends stopped; waiting up to ${DRAIN_MS / 1000}s for ${deliveries.outstanding()} receipts`);
    for (let waited = 0; deliveries.outstanding() > 0 && waited < DRAIN_MS; waited += 250)
      await new Promise((r) => setTimeout(r, 250));
    const tail = o.seconds - windowStart;
    if (tail >= o.windowS / 2) takeWindow(o.seconds);
    benchLag.disable();
    f.stop();

    const lost = deliveries.outstanding();
    const offered = RATE_NAMES.reduce((s, k) => s + o.rates[k] * o.seconds, 0);
    const heldRate = (k: keyof Rates) => (f.fired[k] - firedAtStart[k]) / o.seconds;
    const fired = RATE_NAMES.reduce((s, k) => s + heldRate(k) * o.seconds, 0);
    const sendErrors = rows.at(-1)?.sendErrors ?? 0;
    const v = verdict({
      rows,
      windowS: o.windowS,
      settleS: o.settleS,
      windows,
      redis: redis !== undefined,
      expected: deliveries.expected,
      received: deliveries.received,
      lost,
      sends: f.fired.direct + f.fired.group,
      sendErrors,
      offered,
      fired,
    });

    const held = RATE_NAMES.map((k) => `${k} ${heldRate(k).toFixed(1)}/s of ${o.rates[k]}`).join(", ");
    const stamp = new Date().toISOString().replace(/[:.]/g, "-").slice(0, 19);
    mkdirSync(o.outDir, { recursive: true });
    const base = join(o.outDir, `soak-${stamp}`);
    const target = iso.describe.replace(/ in \/\S+/, "").replace(/(schema|prefix) [A-Za-z0-9_:.-]+/g, "$1 of its own");
    writeFileSync(`${base}.csv`, toCsv(rows));
    const title = `Flock soak, ${o.seconds / 60} min, retention ${retention}, malloc ${malloc.name}, ${target}`;
    await writeSoakPng(`${base}.png`, rows, o.windowS, title).catch((e: Error) =>
      progress(`chart failed: ${e.message}`),
    );
    writeFileSync(
      `${base}.json`,
      `${JSON.stringify(
        {
          date: new Date().toISOString(),
          machine: `${cpus().length} x ${cpus()[0]?.model ?? "cpu"}, node ${process.version}`,
          target,
          retention,
          malloc: malloc.name,
          keyed: isKeyed(),
          windowS: o.windowS,
          seconds: o.seconds,
          shape: o.shape,
          rates: o.rates,
          warmupS: o.warmupS,
          held: Object.fromEntries(RATE_NAMES.map((k) => [k, heldRate(k)])),
          statuses: f.statuses,
          wsReconnects: f.wsReconnects,
          deliveries: {
            expected: deliveries.expected,
            received: deliveries.received,
            lost,
            duplicates: deliveries.duplicates,
            unexpected: deliveries.unexpected,
          },
          windows,
          verdict: { pass: v.pass, checks: v.checks },
          largestTables: rows.at(-1)?.tables,
        },
        null,
        2,
      )}\n`,
    );
    process.stdout.write(`\n${toTable(rows)}\n`);
    process.stdout.write(
      `windows (p50 / p99 ms): ${windows.map((w) => `[${w.from}-${w.to}s] send ${w.send.p50.toFixed(1)} / ${w.send.p99.toFixed(1)}, delivery ${w.deliver.p50.toFixed(1)} / ${w.deliver.p99.toFixed(1)}`).join("; ")}\n`,
    );
    process.stdout.write(
      `held: ${held}; ${deliveries.received} receipts (warm-up included), ${deliveries.duplicates} duplicates; ${f.wsReconnects} WebSocket reconnects\n`,
    );
    process.stdout.write(`largest tables at the end: ${rows.at(-1)?.tables || "n/a (embedded)"}\n`);
    process.stdout.write(`wrote ${base}.csv, ${base}.png, ${base}.json\n`);
    process.stdout.write(`${v.line} (malloc ${malloc.name})\n`);
    return v.pass ? 0 : 1;
  } finally {
    process.off("SIGINT", onSigint);
    await cleanup();
  }
}
