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
import type { Messaging } from "../../runtime/messaging/hub.ts";
import { freshPayload } from "../../runtime/messaging/payload.ts";
import { groupStream, inboxStream } from "../../runtime/messaging/stream-id.ts";
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

/**
 * Principals, groups and sends on a hub built on a unit core, each send stored by the hub and then delivered to its
 * stream, as runtime/messaging/send.ts does: what the hub's and the session's unit tests write with. Ids of the
 * principals made start above `firstId`.
 */
export function unitSends(u: ReturnType<typeof unitCore>, hub: Messaging, firstId: number) {
  let n = 0;
  const agent = (name = "agent") => {
    const id = String(firstId + ++n);
    u.tables.principal(id, { name });
    return id;
  };
  const group = (members: string[]) => {
    const id = u.core.ids.nextRaw();
    u.tables.group(id, members);
    return id;
  };
  const author = (id: string) => ({ id, displayName: u.tables.principals.get(id)!.name, avatarKey: null });
  /** A direct message: its raw id (digits), the id as a string, and its number in the recipient's inbox. */
  const direct = async (from: string, to: string, body = "d") => {
    const threadId = await hub.directThread(from, to);
    if (threadId === null) throw new Error("no thread");
    const m = {
      id: u.core.ids.nextRaw(),
      threadId,
      sender: from,
      recipient: to,
      body,
      createdAt: new Date(u.clock.ms),
    };
    const seq = await hub.storeDirect(m);
    if (seq === null) throw new Error("not stored");
    await hub.deliver({ key: inboxStream(to), seq, id: String(m.id), payload: freshPayload(author(from), m) });
    return { id: String(m.id), raw: m.id, seq };
  };
  /** A group message, as `direct`. */
  const post = async (from: string, g: bigint, body = "g") => {
    const m = { id: u.core.ids.nextRaw(), threadId: g, sender: from, body, createdAt: new Date(u.clock.ms) };
    const seq = await hub.storeGroup(m);
    if (seq === null) throw new Error("not stored");
    const payload = freshPayload(author(from), { ...m, recipient: null });
    await hub.deliver({ key: groupStream(g), seq, id: String(m.id), payload });
    return { id: String(m.id), raw: m.id, seq };
  };
  return { agent, group, direct, post };
}
