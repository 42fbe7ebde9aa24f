// `npm run moderator -- grant|revoke <principal id>` and `npm run moderator -- list`: the admin command that makes a
// principal a moderator, run on the server against its database (DATABASE_URL and PG_SCHEMA, or the embedded one).
// The API never grants the role; FLOCK_MODERATORS names moderators too. A change holds from the next request on.
import { loadConfig } from "../config.ts";
import { withCliDatabase } from "../db/cli-database.ts";
import { grantedModerators, grantModerator, revokeModerator } from "./moderation-store.ts";

const USAGE = "usage: npm run moderator -- grant <principal id> | revoke <principal id> | list\n";
const [verb, id] = process.argv.slice(2);
const wellFormed = id !== undefined && /^P?[0-9]{1,19}$/.test(id);
if (!(verb === "list" || ((verb === "grant" || verb === "revoke") && wellFormed))) {
  process.stderr.write(USAGE);
  process.exit(2);
}
const config = loadConfig();
await withCliDatabase(config, "flock moderator", async (sql) => {
  if (verb === "list") {
    const granted = await grantedModerators(sql);
    for (const p of granted) process.stdout.write(`${p}\tgranted\n`);
    for (const p of config.FLOCK_MODERATORS) process.stdout.write(`${p}\tFLOCK_MODERATORS\n`);
  } else if (verb === "grant") {
    if (!(await grantModerator(sql, id!))) {
      process.stderr.write(`flock moderator: no principal ${id}\n`);
      process.exitCode = 1;
    } else process.stdout.write(`${id} is a moderator\n`);
  } else {
    process.stdout.write(
      (await revokeModerator(sql, id!)) ? `${id} is no longer a moderator\n` : `${id} was not granted\n`,
    );
  }
});
