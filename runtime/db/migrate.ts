// Forward-only migrations: schema/migrations/NNNN_name.sql applied in order, all pending ones in one transaction,
// recorded in flock_migrations. An advisory lock keeps two nodes starting together from racing; the table locks the
// pending migrations declare are taken first (runtime/db/migration-locks.ts).
import { join } from "node:path";
import { readdirSync, readFileSync } from "node:fs";
import type { Sql } from "./client.ts";
import { projectPath } from "../paths.ts";
import { locksOf, takeLocks } from "./migration-locks.ts";

const DIR = projectPath("schema", "migrations");
const LOCK_ID = 7_261_001;

interface Migration {
  name: string;
  sql: string;
}

export function readMigrations(dir = DIR): Migration[] {
  return readdirSync(dir)
    .filter((f) => /^\d{4}_[a-z0-9_]+\.sql$/.test(f))
    .sort()
    .map((name) => ({ name, sql: readFileSync(join(dir, name), "utf8") }));
}

/** How long a migration's statement waits for a table lock before the whole migration steps back and runs again. */
const LOCK_TIMEOUT_MS = 2000;
/** Times a migration runs again after losing a lock wait or a deadlock, and the pause before each (times the attempt). */
const LOCK_ATTEMPTS = 30;
const LOCK_PAUSE_MS = 250;

/**
 * Postgres gave up a lock for this statement: its lock_timeout passed (55P03), the declared locks were not all taken
 * in their phase's bound (57014: the only statement a migration bounds), or it was a deadlock's victim (40P01).
 */
const lostLock = (err: unknown) =>
  ["55P03", "57014", "40P01"].includes(String((err as { code?: unknown } | null)?.code));

export interface MigrateOptions {
  /** lock_timeout of its statements (LOCK_TIMEOUT_MS unless told: tests pass a shorter one). */
  lockTimeoutMs?: number;
  /** Told each time the migration steps back for a lock, before its pause (the node logs it). */
  onRetry?: (attempt: number, pauseMs: number, err: unknown) => void;
}

/**
 * Applies pending migrations in `schema`, all in one transaction; answers the names applied.
 *
 * Nodes of the release before keep serving while the first new node migrates (a rolling upgrade). A statement that
 * changes a table waits for the statements using it, and holds back those that come after it, so a lock wait is
 * bounded (lock_timeout) and a migration that loses one, or is picked as a deadlock's victim against an older node's
 * send, rolls back whole and runs again after a pause in which that traffic goes on: it never leaves a node unable
 * to start, and never holds the fleet's writes behind a lock it cannot get.
 */
export async function migrate(
  sql: Sql,
  schema: string,
  migrations = readMigrations(),
  o: MigrateOptions = {},
): Promise<string[]> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await migrateOnce(sql, schema, migrations, o.lockTimeoutMs ?? LOCK_TIMEOUT_MS);
    } catch (err) {
      if (!lostLock(err) || attempt >= LOCK_ATTEMPTS) throw err;
      o.onRetry?.(attempt, LOCK_PAUSE_MS * attempt, err);
      await new Promise((r) => setTimeout(r, LOCK_PAUSE_MS * attempt));
    }
  }
}

async function migrateOnce(
  sql: Sql,
  schema: string,
  migrations: Migration[],
  lockTimeoutMs: number,
): Promise<string[]> {
  const applied: string[] = [];
  await sql.begin(async (tx) => {
    // a migration may take long; requests' statements may not. Another node's migration is waited for whole (its
    // waits are bounded, as these are), before this one's lock_timeout applies
    await tx.unsafe("set local statement_timeout = 0");
    await tx`select pg_advisory_xact_lock(${LOCK_ID})`;
    await tx.unsafe(`create schema if not exists "${schema}"`);
    await tx.unsafe(`set local search_path to "${schema}"`);
    await tx`create table if not exists flock_migrations (name text primary key, applied_at timestamptz not null default now())`;
    const done = new Set((await tx`select name from flock_migrations`).map((r) => r.name as string));
    const pending = migrations.filter((m) => !done.has(m.name));
    await takeLocks(tx, locksOf(pending));
    await tx.unsafe(`set local lock_timeout = ${Math.round(lockTimeoutMs)}`);
    for (const m of pending) {
      await tx.unsafe(m.sql);
      await tx`insert into flock_migrations (name) values (${m.name})`;
      applied.push(m.name);
    }
  });
  return applied;
}
