// Postgres side of the maintainer's vacuum step (docs/ARCHITECTURE.md, "Retention"): where no autovacuum runs (the
// server's `autovacuum` is off, or the embedded PGlite, which has no background workers), the rows that retention
// deletes and that updates leave behind (moments and their likes and comments, cursors, member rows) are never
// reclaimed, and the tables grow at a fixed load. The maintainer then vacuums our schema's tables by autovacuum's
// own rule, read from the server's settings: dead rows above threshold + scale factor x live rows.
import type { Sql } from "../db/client.ts";

/** Whether the server's autovacuum launcher runs (the setting; track_counts feeds it). */
export async function autovacuumOn(sql: Sql): Promise<boolean> {
  const [r] = await sql<{ on: boolean }[]>`
    select current_setting('autovacuum') = 'on' and current_setting('track_counts') = 'on' as on`;
  return r?.on === true;
}

/** A table of the current schema whose dead rows passed autovacuum's rule. */
export interface DeadRows {
  table: string;
  live: number;
  dead: number;
}

/**
 * The current schema's tables whose dead rows exceed autovacuum_vacuum_threshold + autovacuum_vacuum_scale_factor x
 * live rows (the server's values), most dead first, at most `limit`.
 */
export async function tablesPastVacuumRule(sql: Sql, limit: number): Promise<DeadRows[]> {
  return sql<DeadRows[]>`
    select relname as table, n_live_tup::int as live, n_dead_tup::int as dead
    from pg_stat_user_tables
    where schemaname = current_schema()
      and n_dead_tup > current_setting('autovacuum_vacuum_threshold')::float8
                      + current_setting('autovacuum_vacuum_scale_factor')::float8 * n_live_tup
    order by n_dead_tup desc
    limit ${limit}`;
}

/** A plain VACUUM (ANALYZE) of one table of the current schema: outside any transaction, no exclusive lock. */
export async function vacuumTable(sql: Sql, table: string): Promise<void> {
  await sql.unsafe(`vacuum (analyze) ${quoteIdent(table)}`);
}

const quoteIdent = (name: string) => `"${name.replaceAll('"', '""')}"`;
