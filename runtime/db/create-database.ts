// Real mode with a database that does not exist yet: create it when the role may (as the tests do), otherwise
// say exactly which command creates it. Connects to the server's `postgres` database to do so.
import postgres from "./postgres-driver.ts";

class MissingDatabaseError extends Error {}

/** The database a URL names, and the same URL pointed at the server's maintenance database. */
function parts(url: string): { name: string; admin: string; host: string; port: string; user: string } {
  const u = new URL(url);
  const name = decodeURIComponent(u.pathname.replace(/^\//, "")) || decodeURIComponent(u.username) || "postgres";
  const admin = new URL(url);
  admin.pathname = "/postgres";
  return {
    name,
    admin: admin.toString(),
    host: u.hostname || "localhost",
    port: u.port || "5432",
    user: decodeURIComponent(u.username) || "postgres",
  };
}

const quoteIdent = (s: string) => `"${s.replace(/"/g, '""')}"`;
const quoteShell = (s: string) => (/^[A-Za-z0-9_.:/@-]+$/.test(s) ? s : `'${s.replace(/'/g, `'\\''`)}'`);

/** Creates the database `url` names. Throws MissingDatabaseError with the command to run when the role may not. */
export async function createDatabase(url: string): Promise<string> {
  const { name, admin, host, port, user } = parts(url);
  const sql = postgres(admin, { max: 1, onnotice: () => {}, connect_timeout: 2 });
  try {
    await sql.unsafe(`create database ${quoteIdent(name)}`);
  } catch (err) {
    const code = (err as { code?: string }).code;
    if (code === "42P04") return name; // created meanwhile by another node
    const how = `createdb -h ${quoteShell(host)} -p ${port} -U ${quoteShell(user)} ${quoteShell(name)}`;
    throw new MissingDatabaseError(
      `database ${JSON.stringify(name)} does not exist and could not be created (${(err as Error).message}); ` +
        `create it with: ${how}`,
    );
  } finally {
    await sql.end({ timeout: 1 }).catch(() => {});
  }
  return name;
}
