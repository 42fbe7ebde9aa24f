// Where tests find the real servers. Tests isolate themselves in the test database with a fresh Postgres schema
// and Redis key prefix each; the database itself is created on first use, so `npm test` needs no setup step.
import { randomBytes } from "node:crypto";
import postgres from "postgres";

export const TEST_DATABASE_URL = process.env["TEST_DATABASE_URL"] ?? "postgres://postgres@127.0.0.1:5432/flock_test";
export const TEST_REDIS_URL = process.env["TEST_REDIS_URL"] ?? "redis://127.0.0.1:6379";

/** A name unique to this test run, usable as a schema name and inside a Redis key prefix. */
export function uniqueName(label: string): string {
  return `t_${label
    .replace(/[^a-z0-9]/gi, "")
    .toLowerCase()
    .slice(0, 20)}_${randomBytes(5).toString("hex")}`;
}

/** Creates the test database when it does not exist yet (several test processes may race: that is fine). */
async function ensureTestDatabase(): Promise<void> {
  const url = new URL(TEST_DATABASE_URL);
  const name = decodeURIComponent(url.pathname.slice(1));
  const probe = postgres(TEST_DATABASE_URL, { max: 1, onnotice: () => {}, connect_timeout: 5 });
  try {
    await probe`select 1`;
    return;
  } catch (err) {
    if ((err as { code?: string }).code !== "3D000") throw err; // anything but "database does not exist"
  } finally {
    await probe.end();
  }
  url.pathname = "/postgres";
  const admin = postgres(url.toString(), { max: 1, onnotice: () => {} });
  try {
    await admin.unsafe(`create database "${name.replace(/"/g, '""')}"`);
  } catch (err) {
    if ((err as { code?: string }).code !== "42P04") throw err; // created meanwhile by another test process
  } finally {
    await admin.end();
  }
}

await ensureTestDatabase();
