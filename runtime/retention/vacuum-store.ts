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
 * live rows (the table's own values where it sets them, as autovacuum reads them: migration 0025; else the
 * server's), most dead first, at most `limit`.
 */
export async function tablesPastVacuumRule(sql: Sql, limit: number): Promise<DeadRows[]> {
  return sql<DeadRows[]>`
    select s.relname as table, s.n_live_tup::int as live, s.n_dead_tup::int as dead
    from pg_stat_user_tables s join pg_class c on c.oid = s.relid
      left join lateral (
        select
          max(split_part(o, '=', 2)) filter (where o like 'autovacuum_vacuum_threshold=%')::float8 as threshold,
          max(split_part(o, '=', 2)) filter (where o like 'autovacuum_vacuum_scale_factor=%')::float8 as scale
        from unnest(c.reloptions) as o
      ) own on true
    where s.schemaname = current_schema()
      and s.n_dead_tup > coalesce(own.threshold, current_setting('autovacuum_vacuum_threshold')::float8)
        + coalesce(own.scale, current_setting('autovacuum_vacuum_scale_factor')::float8) * s.n_live_tup
    order by s.n_dead_tup desc
    limit ${limit}`;
}

/** A plain VACUUM (ANALYZE) of one table of the current schema: outside any transaction, no exclusive lock. */
export async function vacuumTable(sql: Sql, table: string): Promise<void> {
  await sql.unsafe(`vacuum (analyze) ${quoteIdent(table)}`);
}

const quoteIdent = (name: string) => `"${name.replaceAll('"', '""')}"`;
