// What handlers may use: the shared services of one node.
import type { Authenticator } from "./auth.ts";
import type { Circuits } from "./circuit.ts";
import type { CacheRepair } from "./social/cache-repair.ts";
import type { Config } from "./config.ts";
import type { Sql } from "./db/client.ts";
import type { Engines } from "./engines/engines.ts";
import type { IdGenerator } from "./ids.ts";
import type { Limiter } from "./limits/limiter.ts";
import type { Logger } from "./log.ts";

export interface Services {
  config: Config;
  log: Logger;
  sql: Sql;
  engines: Engines;
  ids: IdGenerator;
  auth: Authenticator;
  limiter: Limiter;
  /** One per backing server: open while it is out of reach (runtime/circuit.ts). */
  circuits: Circuits;
  /** Cache writes that failed after a commit, retried until Redis takes them (runtime/social/cache-repair.ts). */
  cacheRepair: CacheRepair;
  /** The clock every time-dependent decision reads (tests may replace it). */
  now: () => number;
}
