// Forward-only migrations: schema/migrations/NNNN_name.sql applied in order, each in its own transaction,
// recorded in flock_migrations. An advisory lock keeps two nodes starting together from racing.
import { join } from "node:path";
import { readdirSync, readFileSync } from "node:fs";
import type { Sql } from "./client.ts";
import { projectPath } from "../paths.ts";

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

/** Applies pending migrations in `schema`; answers the names applied. */
export async function migrate(sql: Sql, schema: string, migrations = readMigrations()): Promise<string[]> {
  const applied: string[] = [];
  await sql.begin(async (tx) => {
    await tx`select pg_advisory_xact_lock(${LOCK_ID})`;
    await tx.unsafe(`create schema if not exists "${schema}"`);
    await tx.unsafe(`set local search_path to "${schema}"`);
    await tx.unsafe("set local statement_timeout = 0"); // a migration may take long; requests' statements may not
    await tx`create table if not exists flock_migrations (name text primary key, applied_at timestamptz not null default now())`;
    const done = new Set((await tx`select name from flock_migrations`).map((r) => r.name as string));
    for (const m of migrations) {
      if (done.has(m.name)) continue;
      await tx.unsafe(m.sql);
      await tx`insert into flock_migrations (name) values (${m.name})`;
      applied.push(m.name);
    }
  });
  return applied;
}
