// The one Postgres client (postgres.js). Real server or the embedded PGlite: same SQL, same client.
import type Postgres from "postgres";
import { redactUrl } from "../redact.ts";
import { createDatabase } from "./create-database.ts";
import postgres from "./postgres-driver.ts";

export type Sql = Postgres.Sql;

class DatabaseUnavailableError extends Error {}

interface SqlOptions {
  url: string;
  schema: string;
  pool: number;
  /**
   * A real server's statement_timeout (ms): a statement that cannot finish in time is cancelled and commits nothing,
   * so a send answers (201 or 503) before a client's timeout. Not for PGlite (one session; no timers to speak of).
   */
  statementTimeoutMs?: number;
  /**
   * The embedded PGlite: one backend session behind one connection, whose server ignores a connection's startup
   * parameters, so the schema is set on that session by a statement (else every query ran in `public` while the
   * migrations had made the tables in PG_SCHEMA: 500s on the embedded default with PG_SCHEMA set).
   */
  oneSession?: boolean;
}

/** One round trip to the server (`select 1`): readiness checks and the connection check below. */
export async function ping(sql: Sql): Promise<void> {
  await sql`select 1`;
}

/** Seconds a connection attempt may take, and the constant pause between attempts (postgres.js backs off up to 20 s). */
const CONNECT_TIMEOUT_S = 1;
const RECONNECT_S = 0.1;

/** Connects; a database that does not exist is created first when the role may (see create-database.ts). */
export async function connectSql(opts: SqlOptions): Promise<Sql> {
  try {
    return await open(opts);
  } catch (err) {
    if ((err as { code?: string }).code !== "3D000") throw err;
  }
  await createDatabase(opts.url);
  return open(opts);
}

async function open(opts: SqlOptions): Promise<Sql> {
  const sql = postgres(opts.url, {
    max: opts.pool,
    connection: {
      search_path: opts.schema,
      application_name: "flock",
      ...(opts.statementTimeoutMs
        ? {
            statement_timeout: opts.statementTimeoutMs,
            idle_in_transaction_session_timeout: 2 * opts.statementTimeoutMs,
          }
        : {}),
    },
    onnotice: () => {},
    connect_timeout: CONNECT_TIMEOUT_S,
    backoff: () => RECONNECT_S,
    idle_timeout: 0,
    prepare: true,
    types: { bigint: postgres.BigInt },
  });
  try {
    await ping(sql);
    if (opts.oneSession) await sql.unsafe(`set search_path to "${opts.schema}"`);
  } catch (err) {
    await sql.end({ timeout: 0 }).catch(() => {});
    if ((err as { code?: string }).code === "3D000") throw err;
    throw new DatabaseUnavailableError(`cannot reach Postgres at ${redactUrl(opts.url)}: ${describe(err)}`);
  }
  return sql;
}

function describe(err: unknown): string {
  if (err instanceof AggregateError) return err.errors.map(describe).join("; ");
  return err instanceof Error ? err.message || err.name : String(err);
}
