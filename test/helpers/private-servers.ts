// Private Redis and Postgres servers for fault tests and the chaos suite (test/chaos/): each on its own free port
// under its own temp dir, never the shared 6379 / 5432, so a test may kill, stop, pause and restart them. They live
// with the local cluster, which runs on them too (deploy/local/private-servers.ts); a test passes itself as the
// Teardown.
export {
  freePort,
  PrivatePostgres,
  PrivateRedis,
  register,
  type Teardown,
  tempDir,
} from "../../deploy/local/private-servers.ts";
