// One reading of what a running node holds: its memory and event-loop lag (prom-client's default metrics on its
// /metrics, prefix `flock_`), the Redis it uses (instance-wide used_memory, and the count and MEMORY USAGE of the
// node's own keys by SCAN over its prefix, since the Redis may be shared), and its Postgres (the database's size,
// noisy on a shared server, and the node's schema: its tables with their indexes and TOAST, partitions counted
// under their parent). Embedded, the database is the node's alone: the size of its files under DATA_DIR/pg/base.
import { type Dirent, readdirSync, statSync } from "node:fs";
import { join } from "node:path";
import { Redis } from "ioredis";
import postgres from "postgres";
import { escapeGlob } from "./isolation.ts";

export interface NodeMetrics {
  rssBytes: number;
  heapUsedBytes: number;
  heapTotalBytes: number;
  externalBytes: number;
  /** V8's old space and new space: their committed sizes (the old space's grows and shrinks with major collections) */
  oldSpaceBytes: number;
  newSpaceBytes: number;
  /** event-loop delay since the previous scrape (prom-client resets its histogram on each), seconds */
  lagP99: number;
  lagMax: number;
}

export interface RedisReading {
  usedMemory: number;
  nodeKeys: number;
  nodeBytes: number;
  /** ms the SCAN and MEMORY USAGE took */
  scanMs: number;
}

export interface DbReading {
  /** pg_database_size (Postgres) or undefined (embedded) */
  databaseBytes?: number;
  /** the node's schema, or the embedded database's files */
  schemaBytes: number;
  /** the largest tables, largest first (Postgres only) */
  tables: { name: string; bytes: number }[];
}

/** Values of the named samples in a Prometheus text exposition (the first series of each name). */
export function promValues(text: string, names: string[]): Record<string, number> {
  const want = new Set(names);
  const out: Record<string, number> = {};
  for (const line of text.split("\n")) {
    if (line.startsWith("#")) continue;
    const m = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{[^}]*\})? ([^ ]+)/.exec(line);
    if (m && want.has(m[1]!) && !(m[1]! in out)) out[m[1]!] = Number(m[3]);
  }
  return out;
}

/** The value of the sample `name{label="value"}` in a Prometheus text exposition, NaN when absent. */
export function promLabelled(text: string, name: string, label: string, value: string): number {
  const m = new RegExp(`^${name}\\{[^}]*${label}="${value}"[^}]*\\} ([^ \n]+)`, "m").exec(text);
  return m ? Number(m[1]) : NaN;
}

export async function readNodeMetrics(url: string, token: string): Promise<NodeMetrics> {
  const r = await fetch(`${url}/metrics`, {
    headers: { authorization: `Bearer ${token}` },
    signal: AbortSignal.timeout(5000),
  });
  if (r.status !== 200) throw new Error(`GET /metrics answered ${r.status}`);
  const text = await r.text();
  const v = promValues(text, [
    "flock_process_resident_memory_bytes",
    "flock_nodejs_heap_size_used_bytes",
    "flock_nodejs_heap_size_total_bytes",
    "flock_nodejs_external_memory_bytes",
    "flock_nodejs_eventloop_lag_p99_seconds",
    "flock_nodejs_eventloop_lag_max_seconds",
  ]);
  return {
    rssBytes: v["flock_process_resident_memory_bytes"] ?? NaN,
    heapUsedBytes: v["flock_nodejs_heap_size_used_bytes"] ?? NaN,
    heapTotalBytes: v["flock_nodejs_heap_size_total_bytes"] ?? NaN,
    externalBytes: v["flock_nodejs_external_memory_bytes"] ?? NaN,
    oldSpaceBytes: promLabelled(text, "flock_nodejs_heap_space_size_total_bytes", "space", "old"),
    newSpaceBytes: promLabelled(text, "flock_nodejs_heap_space_size_total_bytes", "space", "new"),
    lagP99: v["flock_nodejs_eventloop_lag_p99_seconds"] ?? NaN,
    lagMax: v["flock_nodejs_eventloop_lag_max_seconds"] ?? NaN,
  };
}

export class RedisSampler {
  private readonly redis: Redis;

  constructor(
    url: string,
    private readonly prefix: string,
  ) {
    this.redis = new Redis(url, { maxRetriesPerRequest: 2 });
  }

  async read(): Promise<RedisReading> {
    const t0 = performance.now();
    const info = await this.redis.info("memory");
    const usedMemory = Number(/^used_memory:(\d+)/m.exec(info)?.[1] ?? NaN);
    let cursor = "0";
    let nodeKeys = 0;
    let nodeBytes = 0;
    do {
      const [next, keys] = await this.redis.scan(cursor, "MATCH", `${escapeGlob(this.prefix)}*`, "COUNT", 1000);
      cursor = next;
      if (keys.length === 0) continue;
      const p = this.redis.pipeline();
      for (const k of keys) p.memory("USAGE", k);
      for (const [err, bytes] of (await p.exec()) ?? []) {
        if (err || bytes === null) continue; // expired between SCAN and MEMORY USAGE
        nodeKeys++;
        nodeBytes += Number(bytes);
      }
    } while (cursor !== "0");
    return { usedMemory, nodeKeys, nodeBytes, scanMs: performance.now() - t0 };
  }

  close(): void {
    this.redis.disconnect();
  }
}

export class PostgresSampler {
  private readonly sql: postgres.Sql;

  constructor(
    url: string,
    private readonly schema: string,
  ) {
    this.sql = postgres(url, { max: 1, onnotice: () => {}, connect_timeout: 5, idle_timeout: 0 });
  }

  async read(): Promise<DbReading> {
    const [db] = await this.sql<{ bytes: string }[]>`select pg_database_size(current_database())::text as bytes`;
    // every table of the schema (partitions too), with its indexes and TOAST, under its partition root
    const rows = await this.sql<{ name: string; bytes: string }[]>`
      select r.relname as name, sum(pg_total_relation_size(c.oid))::text as bytes
        from pg_class c
        join pg_namespace n on n.oid = c.relnamespace
        join pg_class r on r.oid = coalesce(pg_partition_root(c.oid), c.oid)
       where n.nspname = ${this.schema} and c.relkind in ('r', 'm')
       group by r.relname
       order by sum(pg_total_relation_size(c.oid)) desc`;
    const tables = rows.map((r) => ({ name: r.name, bytes: Number(r.bytes) }));
    return {
      databaseBytes: Number(db?.bytes ?? NaN),
      schemaBytes: tables.reduce((s, t) => s + t.bytes, 0),
      tables: tables.slice(0, 5),
    };
  }

  async close(): Promise<void> {
    await this.sql.end({ timeout: 2 });
  }
}

/** Bytes of the files under `dir` (the embedded database's tables: DATA_DIR/pg/base). */
export function dirBytes(dir: string): number {
  let total = 0;
  let entries: Dirent[];
  try {
    entries = readdirSync(dir, { withFileTypes: true });
  } catch {
    return 0;
  }
  for (const e of entries) {
    const p = join(dir, e.name);
    if (e.isDirectory()) total += dirBytes(p);
    else if (e.isFile()) {
      try {
        total += statSync(p).size;
      } catch {
        // removed meanwhile (a dropped table's file)
      }
    }
  }
  return total;
}

export function embeddedDbReading(dataDir: string): DbReading {
  return { schemaBytes: dirBytes(join(dataDir, "pg", "base")), tables: [] };
}
