// postgres.js, loaded with runtime/db/pool-queue.ts as its pool's queue (why: that file's head). The CommonJS build
// resolves its modules through require's cache, so the queue goes into the cache under the path of the package's own
// queue.js before the package is first required; the check after it fails the start if the package was already loaded
// (the queue would be the original). Every runtime part gets postgres.js from here, never from "postgres" itself.
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import type postgresType from "postgres";
import { poolQueue } from "./pool-queue.ts";

const require = createRequire(import.meta.url);
const entry = require.resolve("postgres");
const queuePath = join(dirname(entry), "queue.js");

if (!require.cache[queuePath]) {
  require.cache[queuePath] = { id: queuePath, filename: queuePath, loaded: true, exports: poolQueue, children: [], paths: [] } as unknown as NodeJS.Module;
}
const postgres = require("postgres") as typeof postgresType;
if (require.cache[queuePath]?.exports !== poolQueue) {
  throw new Error(`postgres.js was loaded before runtime/db/postgres-driver.ts; its pool queue (${queuePath}) is the original`);
}

export default postgres;
