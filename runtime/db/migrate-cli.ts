// `npm run migrate`: apply pending migrations to DATABASE_URL (or the embedded database) and exit.
import { loadConfig } from "../config.ts";
import { withCliDatabase } from "./cli-database.ts";
import { migrate } from "./migrate.ts";

const config = loadConfig();
await withCliDatabase(config, "flock migrate", async (sql) => {
  const applied = await migrate(sql, config.PG_SCHEMA);
  process.stdout.write(applied.length ? `applied: ${applied.join(", ")}\n` : "up to date\n");
});
