// CPU time spent by the backends a Flock server uses, for the bench to report per delivery beside the server's and
// the receivers' own: Redis from its INFO (all its threads, wherever it runs), Postgres as the sum over the backends
// connected to the bench's database, read from /proc (only when the server runs on this machine; otherwise left
// out). A backend that exits between two samples takes its time with it: Flock's pool keeps its connections.
import { readFileSync } from "node:fs";
import { Redis } from "ioredis";
import postgres from "postgres";

export interface BackendCpu {
  /** CPU ms used so far: Redis, and Postgres's backends (undefined when not measurable here). */
  sample(): Promise<{ redisMs?: number; postgresMs?: number }>;
  close(): Promise<void>;
}

/** utime + stime of a process, ms (100 ticks a second); 0 when it is gone. */
function procCpuMs(pid: number): number {
  try {
    const f = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]!.split(" ");
    return (Number(f[11]) + Number(f[12])) * 10;
  } catch {
    return 0;
  }
}

export function backendCpu(env: Record<string, string>): BackendCpu {
  const redisUrl = env["REDIS_URL"];
  const dbUrl = env["DATABASE_URL"];
  const redis = redisUrl && !redisUrl.includes("+cluster") ? new Redis(redisUrl, { lazyConnect: true, maxRetriesPerRequest: 1 }) : undefined;
  const sql = dbUrl ? postgres(dbUrl, { max: 1, onnotice: () => {} }) : undefined;
  return {
    async sample() {
      const out: { redisMs?: number; postgresMs?: number } = {};
      if (redis) {
        const info = await redis.info("cpu");
        const v = (k: string) => Number(new RegExp(`${k}:([\\d.]+)`).exec(info)?.[1] ?? "0");
        out.redisMs = (v("used_cpu_sys") + v("used_cpu_user")) * 1000;
      }
      if (sql) {
        const rows = await sql<{ pid: number }[]>`select pid from pg_stat_activity where datname = current_database() and pid <> pg_backend_pid()`;
        let ms = 0;
        for (const r of rows) ms += procCpuMs(r.pid);
        if (rows.length > 0 && ms > 0) out.postgresMs = ms;
      }
      return out;
    },
    async close() {
      redis?.disconnect();
      await sql?.end();
    },
  };
}
