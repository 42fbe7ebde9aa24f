// CPU time spent by the backends a Flock server uses, for the bench to report per delivery beside the server's and
// the receivers' own: Redis from its INFO (all its threads, wherever it runs), Postgres as the sum over the backends
// connected to the bench's database, read from /proc (only when the server runs on this machine, not in a container;
// otherwise left out). Not counted: Postgres's own processes (WAL writer, checkpointer), and the time of a backend
// that exits between two samples (Flock's pool keeps its connections).
import { Redis } from "ioredis";
import postgres from "postgres";
import { cpuMs } from "./procs.ts";

/** One reading: Redis's CPU ms so far, and each Postgres backend's (pid -> ms). */
export interface CpuSample {
  redisMs?: number;
  postgres?: Map<number, number>;
}

export interface BackendCpu {
  sample(): Promise<CpuSample>;
  close(): Promise<void>;
}

/**
 * CPU ms used between two readings: Redis's, and Postgres's backends' (a backend seen only in the later reading
 * counts from its start; one gone by then is left out). Undefined where not measurable here.
 */
export function cpuBetween(a: CpuSample, b: CpuSample): { redisMs?: number; postgresMs?: number } {
  const out: { redisMs?: number; postgresMs?: number } = {};
  if (a.redisMs !== undefined && b.redisMs !== undefined) out.redisMs = b.redisMs - a.redisMs;
  if (b.postgres && b.postgres.size > 0) {
    let ms = 0;
    for (const [pid, t] of b.postgres) ms += t - (a.postgres?.get(pid) ?? 0);
    out.postgresMs = ms;
  }
  return out;
}

/** Sample the Redis at `redisUrl` (one Redis, not a cluster) and the Postgres database at `databaseUrl`, where given. */
export function backendCpu(o: { redisUrl?: string | undefined; databaseUrl?: string | undefined }): BackendCpu {
  const redis = o.redisUrl ? new Redis(o.redisUrl, { lazyConnect: true, maxRetriesPerRequest: 1 }) : undefined;
  const sql = o.databaseUrl ? postgres(o.databaseUrl, { max: 1, onnotice: () => {} }) : undefined;
  return {
    async sample() {
      const out: CpuSample = {};
      if (redis) {
        const info = await redis.info("cpu");
        const v = (k: string) => Number(new RegExp(`${k}:([\\d.]+)`).exec(info)?.[1] ?? "0");
        out.redisMs = (v("used_cpu_sys") + v("used_cpu_user")) * 1000;
      }
      if (sql) {
        const rows = await sql<
          { pid: number }[]
        >`select pid from pg_stat_activity where datname = current_database() and pid <> pg_backend_pid()`;
        out.postgres = new Map();
        for (const r of rows) {
          const ms = cpuMs(r.pid);
          if (ms > 0) out.postgres.set(r.pid, ms);
        }
      }
      return out;
    },
    async close() {
      redis?.disconnect();
      await sql?.end();
    },
  };
}
