// Starts a real Flock node in process on a free port against real Postgres (a fresh schema) and either
// real Redis (a fresh key prefix) or the memory engines; tears everything down when the test ends.
import { Redis } from "ioredis";
import postgres from "postgres";
import { type Config, loadConfig } from "../../runtime/config.ts";
import { connectSql, type Sql } from "../../runtime/db/client.ts";
import { createLogger } from "../../runtime/log.ts";
import { type RunningNode, startNode } from "../../runtime/server.ts";
import { TEST_DATABASE_URL, TEST_REDIS_URL, uniqueName } from "./env.ts";
import { registerAgent } from "./http.ts";
import { PrivatePostgres } from "./private-servers.ts";

export type EngineKind = "redis" | "memory";

export interface TestNode extends RunningNode {
  url: string;
  schema: string;
  prefix: string;
  config: Config;
}

export interface TestNodeOptions {
  engine?: EngineKind;
  /** Share a schema / prefix with another node (multi-node tests). */
  schema?: string;
  prefix?: string;
  env?: Record<string, string>;
  now?: () => number;
  /** Sees each part of the node start and stop (runtime/lifecycle.ts). */
  trace?: (event: string) => void;
  /** Each statement's bound in ms (the node's own unless told): for a test that holds row locks. */
  statementTimeoutMs?: number;
  /** How long a long-polling principal stays online after its last poll began, in ms (the node's own unless told). */
  pollPresenceGraceMs?: number;
}

interface Teardown {
  teardown(fn: () => Promise<void> | void): void;
}

export async function startTestNode(t: Teardown, opts: TestNodeOptions = {}): Promise<TestNode> {
  const engine = opts.engine ?? "redis";
  const schema = opts.schema ?? uniqueName("s");
  const prefix = opts.prefix ?? `flocktest:${uniqueName("p")}:`;
  const config = loadConfig({
    PORT: "0",
    HOST: "127.0.0.1",
    DATABASE_URL: TEST_DATABASE_URL,
    PG_SCHEMA: schema,
    ...(engine === "redis" ? { REDIS_URL: TEST_REDIS_URL, REDIS_PREFIX: prefix } : {}),
    LOG_LEVEL: process.env["TEST_LOG_LEVEL"] ?? "silent",
    FLOCK_SHUTDOWN_GRACE: "2",
    TRUST_PROXY: "1",
    ...opts.env,
  });
  const node = await startNode(config, createLogger(config.LOG_LEVEL), {
    now: opts.now,
    trace: opts.trace,
    statementTimeoutMs: opts.statementTimeoutMs,
    pollPresenceGraceMs: opts.pollPresenceGraceMs,
  });
  t.teardown(async () => {
    await node.close();
    if (!opts.schema) await dropSchema(schema);
    if (!opts.prefix && engine === "redis") await deletePrefix(prefix);
  });
  return { ...node, url: `http://127.0.0.1:${node.port}`, schema, prefix, config };
}

/** A connection to a new, empty schema of its own on the test Postgres (migration tests), dropped when `t` ends. */
export async function emptySchema(t: Teardown): Promise<{ sql: Sql; schema: string }> {
  const schema = uniqueName("mig");
  const sql = await connectSql({ url: TEST_DATABASE_URL, schema, pool: 1 });
  t.teardown(async () => {
    await sql.end({ timeout: 1 });
    await dropSchema(schema);
  });
  await sql`create schema ${sql(schema)}`;
  return { sql, schema };
}

export async function dropSchema(schema: string): Promise<void> {
  const sql = postgres(TEST_DATABASE_URL, { max: 1, onnotice: () => {} });
  try {
    await sql.unsafe(`drop schema if exists "${schema}" cascade`);
  } finally {
    await sql.end();
  }
}

/**
 * A Postgres schema and a Redis prefix of the test's own, for nodes it starts itself (several sharing them), dropped
 * and deleted when the test ends.
 */
export function ownPlace(t: Teardown): { schema: string; prefix: string } {
  const schema = uniqueName("s");
  const prefix = `flocktest:${uniqueName("p")}:`;
  t.teardown(async () => {
    await dropSchema(schema);
    await deletePrefix(prefix);
  });
  return { schema, prefix };
}

/** Deletes every key under a test's prefix (never FLUSHALL). */
export async function deletePrefix(prefix: string): Promise<void> {
  const redis = new Redis(TEST_REDIS_URL);
  try {
    let cursor = "0";
    do {
      const [next, keys] = await redis.scan(cursor, "MATCH", `${prefix}*`, "COUNT", 500);
      cursor = next;
      if (keys.length > 0) await redis.del(...keys);
    } while (cursor !== "0");
  } finally {
    redis.disconnect();
  }
}

/**
 * A node on its own private Postgres (which the test may stop and start), with two agents registered: what the
 * outage tests start from.
 */
export async function nodeOnPrivatePostgres(t: Teardown, label: string, opts: Pick<TestNodeOptions, "now"> = {}) {
  const pg = await PrivatePostgres.start(t);
  const schema = uniqueName(label);
  const node = await startTestNode(t, { env: { DATABASE_URL: pg.url, PG_SCHEMA: schema }, schema, now: opts.now });
  return { pg, schema, node, a: await registerAgent(node.url, "a"), b: await registerAgent(node.url, "b") };
}
