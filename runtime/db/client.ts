// The one Postgres client (postgres.js). Real server or the embedded PGlite: same SQL, same client.
import postgres from "postgres";
import { redactUrl } from "../redact.ts";

export type Sql = postgres.Sql;

export class DatabaseUnavailableError extends Error {}

export interface SqlOptions {
  url: string;
  schema: string;
  pool: number;
}

export async function connectSql(opts: SqlOptions): Promise<Sql> {
  const sql = postgres(opts.url, {
    max: opts.pool,
    connection: { search_path: opts.schema, application_name: "flock" },
    onnotice: () => {},
    connect_timeout: 5,
    idle_timeout: 0,
    prepare: true,
    types: { bigint: postgres.BigInt },
  });
  try {
    await sql`select 1`;
  } catch (err) {
    await sql.end({ timeout: 0 }).catch(() => {});
    throw new DatabaseUnavailableError(`cannot reach Postgres at ${redactUrl(opts.url)}: ${describe(err)}`);
  }
  return sql;
}

function describe(err: unknown): string {
  if (err instanceof AggregateError) return err.errors.map(describe).join("; ");
  return err instanceof Error ? err.message || err.name : String(err);
}
