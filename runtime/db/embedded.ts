// The embedded default: PGlite with its data under DATA_DIR, served on a loopback socket so the
// regular postgres.js client talks to it exactly as to a real server. PGlite is a single backend session:
// the node holds one connection to it (see runtime/server.ts); the socket server's few extra slots only
// serve a migration run that has the node's data directory to itself.
//
// Memory (bench/RESULTS.md, "Idle memory (issue 30)"): PGlite is imported only here, so a node on a real server
// never loads it; a new data directory is made (initdb) by a short-lived child process, since in process initdb's
// own PGlite instance and module (two more WebAssembly memories, ~360 MB, and ~220 MB of buffers) were garbage an
// idle node did not collect for minutes; and Postgres starts with buffers sized for one embedded session rather than
// a server's defaults (EMBEDDED_SETTINGS).
import { spawn } from "node:child_process";
import { existsSync, mkdirSync } from "node:fs";
import { join, resolve } from "node:path";
import type { PGlite } from "@electric-sql/pglite";
import type { PGLiteSocketServer } from "@electric-sql/pglite-socket";
import { lockDataDir } from "./data-lock.ts";

export interface EmbeddedPostgres {
  url: string;
  stop(): Promise<void>;
}

/**
 * Postgres settings the embedded database starts with, after PGlite's own (`PGlite.defaultStartParams`). With a
 * server's shared_buffers (128 MB) PGlite's WebAssembly memory grew from 128 to 189 MB, 151 MB of it resident at
 * idle; with 16 MB it stays at 128 MB, ~30 MB resident. Pages beyond the buffers are read from DATA_DIR through the
 * OS page cache, which RSS does not count.
 */
const EMBEDDED_SETTINGS: Record<string, string> = {
  shared_buffers: "16MB",
};

function startParams(defaults: readonly string[]): string[] {
  return [...defaults, ...Object.entries(EMBEDDED_SETTINGS).flatMap(([k, v]) => ["-c", `${k}=${v}`])];
}

export async function startEmbeddedPostgres(dataDir: string): Promise<EmbeddedPostgres> {
  const lock = lockDataDir(dataDir);
  const dir = resolve(join(dataDir, "pg"));
  let db: PGlite | undefined;
  let server: PGLiteSocketServer;
  try {
    mkdirSync(dir, { recursive: true });
    if (!existsSync(join(dir, "PG_VERSION"))) await initDataDir(dir);
    const [{ PGlite: Pg }, { PGLiteSocketServer: SocketServer }, { pg_trgm }] = await Promise.all([
      import("@electric-sql/pglite"),
      import("@electric-sql/pglite-socket"),
      import("@electric-sql/pglite/contrib/pg_trgm"),
    ]);
    // pg_trgm: the people search's trigram index (schema/migrations/0023_search_indexes.sql), as on a real server
    db = await Pg.create({ dataDir: dir, startParams: startParams(Pg.defaultStartParams), extensions: { pg_trgm } });
    server = new SocketServer({ db, port: 0, host: "127.0.0.1", maxConnections: 16 });
    await server.start();
  } catch (err) {
    await db?.close().catch(() => {});
    lock.release();
    throw err;
  }
  const addr = server.getServerConn();
  const pg = db;
  return {
    url: `postgres://postgres@${addr}/postgres`,
    async stop() {
      try {
        await server.stop();
        await pg.close();
      } finally {
        lock.release();
      }
    },
  };
}

/**
 * Makes a new data directory in `dir` the way PGlite.create does when it finds none (initdb, then one start and a
 * clean stop), in a child process whose memory goes back to the system when it exits.
 */
function initDataDir(dir: string): Promise<void> {
  const code = [
    "const { PGlite } = await import(process.argv[1]);",
    "const db = await PGlite.create({ dataDir: process.argv[2], startParams: [...PGlite.defaultStartParams, ...JSON.parse(process.argv[3])] });",
    "await db.close();",
    "process.exit(0);",
  ].join("\n");
  const url = import.meta.resolve("@electric-sql/pglite");
  // the child needs no loader of the parent's (--import tsx, --inspect ...): its code is plain JavaScript
  const child = spawn(
    process.execPath,
    ["--input-type=module", "-e", code, url, dir, JSON.stringify(startParams([]))],
    {
      stdio: ["ignore", "ignore", "pipe"],
      env: { ...process.env, NODE_OPTIONS: "" },
    },
  );
  let stderr = "";
  child.stderr.setEncoding("utf8").on("data", (d: string) => {
    stderr = (stderr + d).slice(-4000);
  });
  return new Promise((done, fail) => {
    child.once("error", fail);
    child.once("exit", (code, signal) => {
      if (code === 0) done();
      else
        fail(
          new Error(
            `embedded Postgres: creating the data directory ${dir} failed (${signal ?? `exit ${code}`}): ${stderr.trim() || "no output"}`,
          ),
        );
    });
  });
}
