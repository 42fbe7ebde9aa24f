// The embedded default: PGlite with its data under DATA_DIR, served on a loopback socket so the
// regular postgres.js client talks to it exactly as to a real server. PGlite is a single backend session:
// the node holds one connection to it (see runtime/server.ts); the socket server's few extra slots only
// serve a migration run that has the node's data directory to itself.
import { mkdirSync } from "node:fs";
import { join, resolve } from "node:path";
import { PGlite } from "@electric-sql/pglite";
import { PGLiteSocketServer } from "@electric-sql/pglite-socket";

export interface EmbeddedPostgres {
  url: string;
  stop(): Promise<void>;
}

export async function startEmbeddedPostgres(dataDir: string): Promise<EmbeddedPostgres> {
  const dir = resolve(join(dataDir, "pg"));
  mkdirSync(dir, { recursive: true });
  const db = await PGlite.create({ dataDir: dir });
  const server = new PGLiteSocketServer({ db, port: 0, host: "127.0.0.1", maxConnections: 16 });
  await server.start();
  const addr = server.getServerConn();
  return {
    url: `postgres://postgres@${addr}/postgres`,
    async stop() {
      await server.stop();
      await db.close();
    },
  };
}
