// Where tests find the real servers. CI and .ci/run create the database; tests isolate themselves in it
// with a fresh Postgres schema and Redis key prefix each.
import { randomBytes } from "node:crypto";

export const TEST_DATABASE_URL = process.env["TEST_DATABASE_URL"] ?? "postgres://postgres@127.0.0.1:5432/flock_test";
export const TEST_REDIS_URL = process.env["TEST_REDIS_URL"] ?? "redis://127.0.0.1:6379";

/** A name unique to this test run, usable as a schema name and inside a Redis key prefix. */
export function uniqueName(label: string): string {
  return `t_${label.replace(/[^a-z0-9]/gi, "").toLowerCase().slice(0, 20)}_${randomBytes(5).toString("hex")}`;
}
