// A node's core for the unit tier, with no server: the memory engines, the messaging core's stores as their in-memory
// twins (test/twins/), and a clock the test moves by hand. Its Postgres client points at a port nothing listens on and
// is never connected unless something bypasses the stores (which then fails). The circuits' Postgres probe asks the
// twin, so a test that takes the twin down and up sees the circuit close again.
import postgres from "postgres";
import { Authenticator } from "../../runtime/auth.ts";
import { Circuits } from "../../runtime/circuit.ts";
import { loadConfig } from "../../runtime/config.ts";
import { createMemoryEngines } from "../../runtime/engines/memory/index.ts";
import { NodeAnnouncer } from "../../runtime/events/announcer.ts";
import { IdGenerator } from "../../runtime/ids.ts";
import { Limiter, limiterOptions } from "../../runtime/limits/limiter.ts";
import { createLogger } from "../../runtime/log.ts";
import { Metrics } from "../../runtime/metrics.ts";
import { Horizons } from "../../runtime/retention/horizons.ts";
import type { Core } from "../../runtime/services.ts";
import { memoryStores } from "../twins/index.ts";

export interface UnitCoreOptions {
  /** Messages' retention in ms (FLOCK_RETENTION_MESSAGES); unlimited unless given. */
  retentionMs?: number;
}

interface Teardown {
  teardown(fn: () => Promise<void> | void): void;
}

/** The core, the twins' stores and tables, and the clock (`clock.ms`, moved by the test). */
export function unitCore(t: Teardown, opts: UnitCoreOptions = {}) {
  const clock = { ms: 1_800_000_000_000 };
  const now = () => clock.ms;
  const log = createLogger("silent");
  const engines = createMemoryEngines(now);
  const { stores, tables } = memoryStores();
  // never connected: nothing in the core may reach Postgres but through the stores
  const sql = postgres("postgres://nobody@127.0.0.1:1/none", { max: 1, connect_timeout: 1, onnotice: () => {} });
  const config = loadConfig({ LOG_LEVEL: "silent", FLOCK_SHUTDOWN_GRACE: "1" });
  const metrics = new Metrics();
  const circuits = new Circuits(
    {
      postgres: async () => {
        tables.check();
      },
    },
    log,
  );
  t.teardown(async () => {
    circuits.stop();
    await sql.end({ timeout: 0 });
    await engines.close();
  });
  const core: Core = {
    config,
    log,
    sql,
    engines,
    ids: new IdGenerator(1, now),
    auth: new Authenticator(sql, engines.pubsub, now),
    limiter: new Limiter(engines.limits, engines.pubsub, limiterOptions(config, log, metrics), now),
    circuits,
    now,
    horizons: new Horizons(opts.retentionMs ?? null, null, now),
    metrics,
    announce: new NodeAnnouncer(engines.pubsub),
  };
  return { core, stores, tables, clock };
}
