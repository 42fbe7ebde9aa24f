// The embedded default: PGlite with its data under DATA_DIR, served on a loopback socket so the
// regular postgres.js client talks to it exactly as to a real server. PGlite is a single backend session:
// the node holds one connection to it (see runtime/server.ts); the socket server's few extra slots only
// serve a migration run that has the node's data directory to itself.
import { mkdirSync } from "node:fs";
import { join, resolve } from "node:path";
import { PGlite } from "@electric-sql/pglite";
import { PGLiteSocketServer } from "@electric-sql/pglite-socket";
import { lockDataDir } from "./data-lock.ts";

export interface EmbeddedPostgres {
  url: string;
  stop(): Promise<void>;
}

export async function startEmbeddedPostgres(dataDir: string): Promise<EmbeddedPostgres> {
  const lock = lockDataDir(dataDir);
  const dir = resolve(join(dataDir, "pg"));
  let db: PGlite | undefined;
  let server: PGLiteSocketServer;
  try {
    mkdirSync(dir, { recursive: true });
    db = await PGlite.create({ dataDir: dir });
    server = new PGLiteSocketServer({ db, port: 0, host: "127.0.0.1", maxConnections: 16 });
    await server.start();
  } catch (err) {
    await db?.close().catch(() => {});
    lock.release();
    throw err;
  }
  const addr = server.getServerConn();
  return {
    url: `postgres://postgres@${addr}/postgres`,
    async stop() {
      try {
        await server.stop();
        await db.close();
      } finally {
        lock.release();
      }
    },
  };
}
