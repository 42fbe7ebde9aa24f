// What a soak run has to itself on shared servers: on DATABASE_URL, the database `flock_bench` (created when
// missing) and a fresh schema in it; on REDIS_URL, a fresh key prefix. Both are removed afterwards: the schema
// dropped, the prefix's keys deleted. Nothing else on those servers is touched (no FLUSHALL, no other schema).
// Embedded (no DATABASE_URL): a new DATA_DIR, removed afterwards.
import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Redis } from "ioredis";
import postgres from "postgres";

export const BENCH_DATABASE = "flock_bench";

export interface Isolation {
  /** Env for the node: DATABASE_URL and PG_SCHEMA, or DATA_DIR; REDIS_URL and REDIS_PREFIX when on Redis. */
  env: Record<string, string>;
  /** Postgres URL of the bench database (undefined when embedded). */
  databaseUrl?: string;
  schema: string;
  /** Embedded data directory (undefined on Postgres). */
  dataDir?: string;
  redisUrl?: string;
  redisPrefix?: string;
  describe: string;
  /** Drop the schema, delete the prefix's keys, remove the data directory. */
  release(): Promise<string[]>;
}

/** `url` pointed at the bench database. */
function benchUrl(url: string): string {
  const u = new URL(url);
  u.pathname = `/${BENCH_DATABASE}`;
  return u.toString();
}

async function ensureDatabase(url: string): Promise<void> {
  const sql = postgres(url, { max: 1, onnotice: () => {}, connect_timeout: 5 });
  try {
    const [row] = await sql`select 1 as one from pg_database where datname = ${BENCH_DATABASE}`;
    if (row) return;
    await sql.unsafe(`create database "${BENCH_DATABASE}"`).catch((err: { code?: string }) => {
      if (err.code !== "42P04") throw err; // created meanwhile
    });
  } finally {
    await sql.end({ timeout: 2 });
  }
}

/** Deletes every key under `prefix` (SCAN and UNLINK in batches): only this run's keys. */
export async function deletePrefix(redisUrl: string, prefix: string): Promise<number> {
  const redis = new Redis(redisUrl, { maxRetriesPerRequest: 2, lazyConnect: true });
  await redis.connect();
  let deleted = 0;
  try {
    let cursor = "0";
    do {
      const [next, keys] = await redis.scan(cursor, "MATCH", `${escapeGlob(prefix)}*`, "COUNT", 1000);
      cursor = next;
      if (keys.length) deleted += await redis.unlink(...keys);
    } while (cursor !== "0");
  } finally {
    redis.disconnect();
  }
  return deleted;
}

/** A prefix as a literal in a SCAN MATCH pattern. */
export const escapeGlob = (s: string) => s.replace(/[*?[\]\\]/g, "\\$&");

export async function isolate(label: string): Promise<Isolation> {
  const id = `${label}_${Date.now().toString(36)}_${randomBytes(3).toString("hex")}`;
  const env: Record<string, string> = {};
  const parts: string[] = [];
  const out: Omit<Isolation, "release" | "describe"> = { env, schema: id };
  const dbEnv = process.env["DATABASE_URL"];
  if (dbEnv) {
    await ensureDatabase(dbEnv);
    out.databaseUrl = benchUrl(dbEnv);
    env["DATABASE_URL"] = out.databaseUrl;
    env["PG_SCHEMA"] = id;
    parts.push(`Postgres database ${BENCH_DATABASE}, schema ${id}`);
  } else {
    out.dataDir = mkdtempSync(join(tmpdir(), `flock-${label}-`));
    env["DATA_DIR"] = out.dataDir;
    parts.push(`embedded PGlite in ${out.dataDir}`);
  }
  const redisEnv = process.env["REDIS_URL"];
  if (redisEnv) {
    if (!/^rediss?:\/\//i.test(redisEnv))
      throw new Error("the soak samples one Redis (redis:// or rediss://), not a cluster URL");
    out.redisUrl = redisEnv;
    out.redisPrefix = `${id}:`;
    env["REDIS_URL"] = redisEnv;
    env["REDIS_PREFIX"] = out.redisPrefix;
    parts.push(`Redis prefix ${out.redisPrefix}`);
  } else {
    parts.push("memory engines");
  }
  return {
    ...out,
    describe: parts.join(", "),
    async release() {
      const done: string[] = [];
      if (out.databaseUrl) {
        const sql = postgres(out.databaseUrl, { max: 1, onnotice: () => {}, connect_timeout: 5 });
        try {
          await sql.unsafe(`drop schema if exists "${id}" cascade`);
          done.push(`dropped schema ${id}`);
        } finally {
          await sql.end({ timeout: 2 });
        }
      }
      if (out.redisUrl && out.redisPrefix)
        done.push(`deleted ${await deletePrefix(out.redisUrl, out.redisPrefix)} keys under ${out.redisPrefix}`);
      if (out.dataDir) {
        rmSync(out.dataDir, { recursive: true, force: true });
        done.push(`removed ${out.dataDir}`);
      }
      return done;
    },
  };
}
