// `npm run migrate`: apply pending migrations to DATABASE_URL (or the embedded database) and exit.
import { loadConfig } from "../config.ts";
import { connectSql } from "./client.ts";
import { startEmbeddedPostgres } from "./embedded.ts";
import { migrate } from "./migrate.ts";

const config = loadConfig();
const embedded = config.DATABASE_URL ? undefined : await startEmbeddedPostgres(config.DATA_DIR);
try {
  const sql = await connectSql({
    url: config.DATABASE_URL ?? embedded!.url,
    schema: config.PG_SCHEMA,
    pool: 1,
    oneSession: embedded !== undefined,
  });
  const applied = await migrate(sql, config.PG_SCHEMA);
  process.stdout.write(applied.length ? `applied: ${applied.join(", ")}\n` : "up to date\n");
  await sql.end();
} catch (err) {
  process.stderr.write(`flock migrate: ${(err as Error).message}\n`);
  process.exitCode = 1;
} finally {
  await embedded?.stop();
}
