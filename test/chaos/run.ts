// `npm run chaos`: a private Redis, a private Postgres cluster and two Flock nodes on ports of their own, traffic
// by long poll and WebSocket with acks, and one fault after another. Prints a table per fault and ends with
// "chaos: N faults, N failed" (exit code 1 when any failed).
//
//   npm run chaos                          every fault
//   npm run chaos -- --only redis-empty    one fault (or several, comma-separated)
//   npm run chaos -- --list                the faults' names
//   options: --pairs N (sender/receiver pairs, default 8), --rate N (sends per second per sender, default 10),
//            --logs DIR (keep the nodes' logs there, the rolling faults' too; otherwise they go with the temp dirs),
//            --agents N (rolling-restart's SDK agents, default 1000), --agents-rate N (their sends per second in all,
//            default 150; both scaled down on a machine slower than rolling.ts FULL_LOAD_RPS, unless --full-load)
// rolling-restart and rolling-upgrade run last, each on a topology of its own (nginx and three nodes:
// test/chaos/rolling.ts; the upgrade's previous release is built in a temp folder first, once per release).
import { mkdirSync } from "node:fs";
import { parseArgs } from "node:util";
import { type Cluster, FAULTS, runFault } from "./faults.ts";
import { ROLLING_RESTART, ROLLING_UPGRADE, runRollingRestart, runRollingUpgrade } from "./rolling.ts";
import { cleanupAll, FlockNode, freePort, makeTempDir, PrivatePostgres, PrivateRedis } from "./servers.ts";
import { ACK_RECOVERY_MS, type FaultResult, LOG_LINE_BUDGET, MAX_REDELIVERIES_PER_S, notRun } from "./tracker.ts";
import { runWebhookFault, WEBHOOK_ENDPOINT_DOWN, WEBHOOK_NODE_ENV } from "./webhooks.ts";

const RUN_LIMIT_MS = 14 * 60_000;

/** The faults on the reference topology, run after the two-node cluster's, in this order. */
const ROLLING = [
  { ...ROLLING_RESTART, run: runRollingRestart },
  { ...ROLLING_UPGRADE, run: runRollingUpgrade },
];

const { values } = parseArgs({
  options: {
    only: { type: "string" },
    list: { type: "boolean", default: false },
    pairs: { type: "string", default: "8" },
    rate: { type: "string", default: "10" },
    logs: { type: "string" },
    agents: { type: "string", default: "1000" },
    "agents-rate": { type: "string", default: "150" },
    "full-load": { type: "boolean", default: false },
  },
});

const log = (line: string) => process.stdout.write(`${line}\n`);

/** The two-node cluster's faults to run, and the reference topology's. */
function pickFaults() {
  if (!values.only) return { faults: FAULTS, webhook: true, rolling: ROLLING };
  const names = values.only
    .split(",")
    .map((s) => s.trim())
    .filter(Boolean);
  const known = [...FAULTS.map((f) => f.name), WEBHOOK_ENDPOINT_DOWN.name, ...ROLLING.map((f) => f.name)];
  const unknown = names.filter((n) => !known.includes(n));
  if (unknown.length) {
    process.stderr.write(`chaos: unknown fault(s) ${unknown.join(", ")}; known: ${known.join(", ")}\n`);
    process.exit(2);
  }
  return {
    faults: FAULTS.filter((f) => names.includes(f.name)),
    webhook: names.includes(WEBHOOK_ENDPOINT_DOWN.name),
    rolling: ROLLING.filter((f) => names.includes(f.name)),
  };
}

function table(r: FaultResult): string {
  const rows: [string, string][] = [
    ["sent", String(r.sent)],
    ["201", String(r.created)],
    ["delivered", String(r.delivered)],
    ["lost", String(r.lost)],
    ["delivered again after an ack", String(r.afterAck)],
    ["acked, but not in Postgres", `${r.ackNotDurable} (delivered again by the next read past the cursor)`],
    ["stuck after 10 s", String(r.stuck)],
    ["duplicates", `${r.duplicates} (one send stored or delivered as more than one message)`],
    ["time to recover", r.recoverSeconds === null ? "never" : `${r.recoverSeconds.toFixed(2)} s`],
    ["fault lasted", `${r.faultSeconds.toFixed(1)} s`],
    ["5xx other than 503", String(r.bad5xx)],
    ["requests hanging past 5 s", String(r.hangs)],
    ["redelivered (before any ack)", String(r.redelivered)],
    ["retried with the same key", `${r.retried} (${r.replayed} ended with a replayed answer)`],
    [
      "no 201, yet committed",
      `${r.no201Committed}${r.no201CommittedLatest === null ? "" : ` (the slowest delivered ${r.no201CommittedLatest.toFixed(1)} s after its failed answer)`}` +
        `; ${r.no201Committed - r.no201Unresolved} answered 201 by a retry with its key`,
    ],
    ["no 201 in the end, yet delivered", `${r.no201Delivered} (its sender gave up on a message that arrived)`],
    [
      "503 but committed",
      `${r.committed503} (a 503 without "stored":"unknown" for a stored send); ${r.unknown503} 503s said "stored":"unknown"`,
    ],
    [
      "refused acks",
      `${r.refusedAcks}, ${r.refusedAcksLate} not acknowledged within ${ACK_RECOVERY_MS / 1000} s of recovery` +
        `${r.refusedAckSlowest === null ? "" : ` (the slowest ${r.refusedAckSlowest.toFixed(2)} s)`}` +
        `${r.refusedAcksUnconfirmed ? `; ${r.refusedAcksUnconfirmed} acknowledged in Postgres, never confirmed` : ""}`,
    ],
    [
      "redeliveries per message",
      `${r.redeliveryRate.toFixed(1)}/s at the most (limit ${MAX_REDELIVERIES_PER_S}/s); ${r.hotLoops} over it`,
    ],
    ["resets during SIGTERM", r.resets === null ? "- (not a graceful shutdown)" : String(r.resets)],
    ["node log lines", r.logLines === null ? "not counted" : `${r.logLines} (budget ${LOG_LINE_BUDGET})`],
  ];
  rows.push(...(r.notes ?? []));
  const w = Math.max(...rows.map(([k]) => k.length));
  const lines = [`== ${r.name}: ${r.description}`];
  for (const [k, v] of rows) lines.push(`   ${k.padEnd(w)}  ${v}`);
  lines.push(`   statuses during the fault:`);
  for (const chunk of wrap(r.statuses || "(none)", 100)) lines.push(`     ${chunk}`);
  for (const x of r.worst) lines.push(`   ${x}`);
  lines.push(
    `   => ${r.failures.length ? `FAIL: ${r.failures.join("; ")}` : `pass${r.verdict ? `: ${r.verdict}` : ""}`}`,
  );
  return lines.join("\n");
}

function wrap(s: string, width: number): string[] {
  const out: string[] = [];
  let line = "";
  for (const part of s.split(", ")) {
    const next = line ? `${line}, ${part}` : part;
    if (next.length > width && line) {
      out.push(`${line},`);
      line = part;
    } else line = next;
  }
  if (line) out.push(line);
  return out;
}

function summary(results: FaultResult[]): string {
  const head = [
    "fault",
    "sent",
    "201",
    "deliv",
    "lost",
    "again",
    "!durable",
    "stuck",
    "dup",
    "recover",
    "5xx",
    "hang",
    "503+stored",
    "ack>2s",
    "redeliv/s",
    "resets",
    "logs",
    "verdict",
  ];
  const rows = results.map((r) => [
    r.name,
    String(r.sent),
    String(r.created),
    String(r.delivered),
    String(r.lost),
    String(r.afterAck),
    String(r.ackNotDurable),
    String(r.stuck),
    String(r.duplicates),
    r.recoverSeconds === null ? "never" : `${r.recoverSeconds.toFixed(2)}s`,
    String(r.bad5xx),
    String(r.hangs),
    String(r.committed503),
    `${r.refusedAcksLate}/${r.refusedAcks}`,
    r.redeliveryRate.toFixed(1),
    r.resets === null ? "-" : String(r.resets),
    r.logLines === null ? "-" : String(r.logLines),
    r.failures.length ? "FAIL" : "pass",
  ]);
  const widths = head.map((h, i) => Math.max(h.length, ...rows.map((row) => row[i]!.length)));
  const fmt = (row: string[]) =>
    row.map((c, i) => (i === 0 ? c.padEnd(widths[i]!) : c.padStart(widths[i]!))).join("  ");
  return [fmt(head), ...rows.map(fmt)].join("\n");
}

/**
 * The faults of the two-node cluster (faults.ts, then webhooks.ts's when `webhook`), each judged into `results`; the
 * nodes are stopped after.
 */
async function twoNodeFaults(
  faults: typeof FAULTS,
  webhook: boolean,
  results: FaultResult[],
  started: number,
): Promise<string> {
  log("chaos: starting a private Redis, a private Postgres cluster and two Flock nodes");
  const [redis, pg] = await Promise.all([PrivateRedis.start(), PrivatePostgres.start()]);
  let logDir: string;
  if (values.logs) {
    logDir = values.logs;
    mkdirSync(logDir, { recursive: true });
  } else logDir = makeTempDir("logs");
  const env = { DATABASE_URL: pg.url, REDIS_URL: redis.url, ...WEBHOOK_NODE_ENV };
  const sending = new FlockNode("sending", await freePort(), env, logDir);
  const receiving = new FlockNode("receiving", await freePort(), env, logDir);
  // one after the other: the first applies the migrations
  await sending.start();
  await receiving.start();
  const cluster: Cluster = { redis, pg, sending, receiving };
  log(
    `chaos: redis ${redis.port}, postgres ${pg.port}, sending node ${sending.port}, receiving node ${receiving.port}` +
      ` (${((Date.now() - started) / 1000).toFixed(1)} s); ${values.pairs} pairs at ${values.rate}/s each`,
  );

  for (const fault of faults) {
    const t0 = Date.now();
    log(`\nchaos: ${fault.name}`);
    let result: FaultResult;
    try {
      result = await runFault(cluster, fault, {
        pairs: Number(values.pairs),
        perSecond: Number(values.rate),
        warmupMs: 4_000,
        afterMs: 6_000,
        log,
      });
    } catch (err) {
      log(`  ${fault.name}: the harness could not run it: ${(err as Error).message}`);
      result = notRun(fault.name, fault.description, (err as Error).message.split("\n")[0]!);
    }
    log(table(result));
    log(`   (${((Date.now() - t0) / 1000).toFixed(1)} s)`);
    results.push(result);
  }

  if (webhook) {
    const t0 = Date.now();
    log(`\nchaos: ${WEBHOOK_ENDPOINT_DOWN.name}`);
    let result: FaultResult;
    try {
      result = await runWebhookFault(cluster, log);
    } catch (err) {
      log(`  ${WEBHOOK_ENDPOINT_DOWN.name}: the harness could not run it: ${(err as Error).message}`);
      const { name, description } = WEBHOOK_ENDPOINT_DOWN;
      result = notRun(name, description, (err as Error).message.split("\n")[0]!);
    }
    log(table(result));
    log(`   (${((Date.now() - t0) / 1000).toFixed(1)} s)`);
    results.push(result);
  }

  // the rolling restart that may follow has the machine's cores to itself
  await Promise.all([sending.signal("SIGINT"), receiving.signal("SIGINT")]);
  return logDir;
}

async function main(): Promise<number> {
  if (values.list) {
    for (const f of [...FAULTS, WEBHOOK_ENDPOINT_DOWN, ...ROLLING]) log(`${f.name.padEnd(18)} ${f.description}`);
    return 0;
  }
  const { faults, webhook, rolling } = pickFaults();
  const agents = Number(values.agents);
  const agentsRate = Number(values["agents-rate"]);
  if (!Number.isInteger(agents) || agents < 4 || !(agentsRate > 0)) {
    process.stderr.write(`chaos: --agents must be a whole number of at least 4 and --agents-rate above 0\n`);
    return 2;
  }
  const watchdog = setTimeout(() => {
    process.stderr.write(`chaos: gave up after ${RUN_LIMIT_MS / 60_000} minutes\n`);
    cleanupAll();
    process.exit(1);
  }, RUN_LIMIT_MS);
  watchdog.unref();
  const started = Date.now();

  const results: FaultResult[] = [];
  let logDir: string | undefined;
  if (faults.length > 0 || webhook) logDir = await twoNodeFaults(faults, webhook, results, started);
  for (const fault of rolling) {
    const t0 = Date.now();
    log(`\nchaos: ${fault.name}`);
    let result: FaultResult;
    try {
      result = await fault.run({
        agents,
        perSecond: agentsRate,
        warmupMs: 5_000,
        afterMs: 6_000,
        log,
        logs: values.logs,
        fullLoad: values["full-load"],
      });
    } catch (err) {
      log(`  ${fault.name}: the harness could not run it: ${(err as Error).message}`);
      result = notRun(fault.name, fault.description, (err as Error).message.split("\n")[0]!);
    }
    log(table(result));
    log(`   (${((Date.now() - t0) / 1000).toFixed(1)} s)`);
    results.push(result);
  }

  const failed = results.filter((r) => r.failures.length > 0).length;
  log(`\n${summary(results)}`);
  if (values.logs && logDir) log(`node logs: ${logDir}`);
  log(`chaos: ${results.length} faults, ${failed} failed (${((Date.now() - started) / 1000).toFixed(0)} s)`);
  return failed > 0 ? 1 : 0;
}

main().then(
  (code) => {
    cleanupAll();
    process.exit(code);
  },
  (err: unknown) => {
    process.stderr.write(`chaos: ${(err as Error).stack ?? String(err)}\n`);
    cleanupAll();
    process.exit(1);
  },
);
