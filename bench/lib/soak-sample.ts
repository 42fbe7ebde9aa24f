// The record of a soak: one row every 10 s, written as CSV and printed as a table.

export interface SoakSample {
  /** seconds since the fleet started sending */
  t: number;
  rssMb: number;
  heapUsedMb: number;
  heapTotalMb: number;
  /** memory outside V8's heap that V8 accounts for (Buffers, ArrayBuffers): with the heap, what the rest of RSS is not */
  externalMb: number;
  /** V8's old and new spaces, committed */
  oldSpaceMb: number;
  newSpaceMb: number;
  /** glibc malloc's main heap (`[heap]` in smaps) and all anonymous memory, resident (bench/lib/proc-memory.ts) */
  mallocHeapMb: number;
  anonMb: number;
  /** Redis INFO used_memory, instance-wide (NaN without Redis) */
  redisUsedMb: number;
  /** the node's own keys (SCAN over its prefix): how many, and their MEMORY USAGE */
  redisKeys: number;
  redisNodeMb: number;
  /** pg_database_size (NaN embedded) */
  dbMb: number;
  /** the node's schema (Postgres) or the embedded database's files: the verdict's database size */
  schemaMb: number;
  /** the largest tables, `name:MB` */
  tables: string;
  /** calls a second made in this sample's interval */
  directPerS: number;
  groupPerS: number;
  socialPerS: number;
  /** receipts a second in this interval */
  deliveredPerS: number;
  sendP50: number;
  sendP99: number;
  deliverP50: number;
  deliverP99: number;
  /** receipts awaited now, and of those awaited longer than 10 s */
  outstanding: number;
  overdue: number;
  /** sends that failed so far */
  sendErrors: number;
  lagP99Ms: number;
  lagMaxMs: number;
  /** % of one core */
  nodeCpu: number;
  benchCpu: number;
  benchLagP99Ms: number;
}

export const COLUMNS: (keyof SoakSample)[] = [
  "t",
  "rssMb",
  "heapUsedMb",
  "heapTotalMb",
  "externalMb",
  "oldSpaceMb",
  "newSpaceMb",
  "mallocHeapMb",
  "anonMb",
  "redisUsedMb",
  "redisKeys",
  "redisNodeMb",
  "dbMb",
  "schemaMb",
  "tables",
  "directPerS",
  "groupPerS",
  "socialPerS",
  "deliveredPerS",
  "sendP50",
  "sendP99",
  "deliverP50",
  "deliverP99",
  "outstanding",
  "overdue",
  "sendErrors",
  "lagP99Ms",
  "lagMaxMs",
  "nodeCpu",
  "benchCpu",
  "benchLagP99Ms",
];

const cell = (v: number | string) =>
  typeof v === "string" ? v : Number.isNaN(v) ? "" : String(Math.round(v * 100) / 100);

export function toCsv(rows: SoakSample[]): string {
  const quote = (s: string) => (/[",\n]/.test(s) ? `"${s.replace(/"/g, '""')}"` : s);
  return `${COLUMNS.join(",")}\n${rows.map((r) => COLUMNS.map((c) => quote(cell(r[c]))).join(",")).join("\n")}\n`;
}

/** The sampled numbers as an aligned table (every row up to 40, else evenly spaced ones and the last). */
export function toTable(rows: SoakSample[]): string {
  const head = [
    "t s",
    "rss MB",
    "heap MB",
    "redis MB",
    "node keys",
    "keys MB",
    "schema MB",
    "msg/s",
    "grp/s",
    "recv/s",
    "send p50/p99",
    "deliv p50/p99",
    "lag p99",
    "node cpu%",
    "waiting",
  ];
  const step = Math.max(1, Math.ceil(rows.length / 40));
  const shown = rows.filter((_, i) => i % step === 0 || i === rows.length - 1);
  const lines = [
    head,
    ...shown.map((r) => [
      cell(r.t),
      r.rssMb.toFixed(0),
      r.heapUsedMb.toFixed(0),
      Number.isNaN(r.redisUsedMb) ? "-" : r.redisUsedMb.toFixed(1),
      Number.isNaN(r.redisUsedMb) ? "-" : String(r.redisKeys),
      Number.isNaN(r.redisUsedMb) ? "-" : r.redisNodeMb.toFixed(2),
      r.schemaMb.toFixed(1),
      r.directPerS.toFixed(0),
      r.groupPerS.toFixed(0),
      r.deliveredPerS.toFixed(0),
      `${r.sendP50.toFixed(1)}/${r.sendP99.toFixed(1)}`,
      `${r.deliverP50.toFixed(1)}/${r.deliverP99.toFixed(1)}`,
      r.lagP99Ms.toFixed(1),
      r.nodeCpu.toFixed(0),
      String(r.outstanding),
    ]),
  ];
  const widths = head.map((_, i) => Math.max(...lines.map((l) => l[i]!.length)));
  return `${lines.map((l) => l.map((c, i) => c.padStart(widths[i]!)).join("  ")).join("\n")}\n`;
}
