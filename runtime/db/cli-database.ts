// The database a command run on the server works on (`npm run migrate`, `npm run moderator`): DATABASE_URL and
// PG_SCHEMA, or the embedded one in DATA_DIR, started for the command and stopped after it. A failure is printed as
// one line naming the command, with exit code 1.
import type { Config } from "../config.ts";
import { connectSql, type Sql } from "./client.ts";
import { startEmbeddedPostgres } from "./embedded.ts";

export async function withCliDatabase(
  config: Config,
  command: string,
  run: (sql: Sql) => Promise<void>,
): Promise<void> {
  const embedded = config.DATABASE_URL ? undefined : await startEmbeddedPostgres(config.DATA_DIR);
  try {
    const sql = await connectSql({
      url: config.DATABASE_URL ?? embedded!.url,
      schema: config.PG_SCHEMA,
      pool: 1,
      oneSession: embedded !== undefined,
    });
    try {
      await run(sql);
    } finally {
      await sql.end();
    }
  } catch (err) {
    process.stderr.write(`${command}: ${(err as Error).message}\n`);
    process.exitCode = 1;
  } finally {
    await embedded?.stop();
  }
}
