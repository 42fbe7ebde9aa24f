// The faults, and one fault's run: fresh agents, traffic for a few seconds, the fault, traffic through recovery,
// then no more sends and a drain (every 201'd message delivered and acked, or 10 s past its 201: stuck).
import { setTimeout as sleep } from "node:timers/promises";
import postgres from "postgres";
import { TimedOut, until } from "../helpers/wait.ts";
import type { FlockNode, PrivatePostgres, PrivateRedis } from "./servers.ts";
import { type Durable, type FaultResult, judge, type Phases, Tracker } from "./tracker.ts";
import {
  type Actor,
  AckGate,
  type Agent,
  createGroup,
  register,
  startPoller,
  startSender,
  startWsReceiver,
} from "./traffic.ts";

export interface Cluster {
  redis: PrivateRedis;
  pg: PrivatePostgres;
  /** Every sender talks to this node. */
  sending: FlockNode;
  /** Every receiver (long poll and WebSocket) talks to this node. */
  receiving: FlockNode;
}

export interface Fault {
  name: string;
  description: string;
  /** Injects the fault, undoes it, and resolves when the harness has undone it. */
  run(c: Cluster, t: Tracker, acks: AckGate): Promise<void>;
  /**
   * The fault kills the sending node between a send's commit and its publish: the run fails unless some
   * sends were committed yet never answered (then each must still arrive within 10 s: the position check's case).
   */
  strandsSends?: boolean;
  /** The fault meets acks under way: the run fails unless some (long poll and WebSocket) were answered unavailable. */
  meetsAcks?: boolean;
  /** A graceful shutdown (SIGTERM): every request it accepted gets an answer, none a reset. */
  graceful?: boolean;
}

async function restart(node: FlockNode, sig: NodeJS.Signals): Promise<void> {
  await node.signal(sig);
  await node.start();
}

/** A crash is a race with what the node was doing: a few of them per run give the race a few chances. */
const KILLS = 3;

async function killRepeatedly(node: FlockNode): Promise<void> {
  for (let i = 0; i < KILLS; i++) {
    if (i > 0) await sleep(2_000);
    await restart(node, "SIGKILL");
  }
}

/**
 * kill -9 of the sending node with a send committed in Postgres but not yet published, every time (a plain
 * kill hits that window of a few ms by luck only): a lock on `messages` holds the node's send statement, Redis
 * pauses writes, the lock goes (the statement commits; its PUBLISH waits on the pause), and the node is
 * killed before the pause ends. Its row in Postgres is all that is left: the position check must find it.
 */
async function killMidSend(c: Cluster, t: Tracker): Promise<void> {
  const sql = postgres(c.pg.url, { max: 2, onnotice: () => {}, connect_timeout: 5 });
  try {
    const unlock = await holdWrites(sql, "messages");
    // sends still retrying after an earlier kill may be committed already: only one committed from now on counts
    let earlier = new Set<string>();
    try {
      await soon(async () => (await lockWaiters(sql)) > 0); // a send batch's statement waits on the lock
      earlier = await committedUnanswered(sql, t);
      await c.redis.pauseWrites(3_000);
    } finally {
      await unlock();
    }
    try {
      // it went on and committed (a send still unanswered is in Postgres); its append waits for Redis
      await soon(async () => [...(await committedUnanswered(sql, t))].some((tag) => !earlier.has(tag)));
      await c.sending.signal("SIGKILL");
    } finally {
      await c.redis.unpause();
    }
  } finally {
    await sql.end({ timeout: 1 });
  }
  await c.sending.start();
}

/** Waits until `check` says yes, at most 2 s: past that the fault goes on anyway and its verdict tells. */
async function soon(check: () => Promise<boolean>): Promise<void> {
  await until(check, { ms: 2_000, every: 10 }).catch((err: unknown) => {
    if (!(err instanceof TimedOut)) throw err;
  });
}

/** The sends still waiting for their answer (or retrying) that Postgres already holds. */
async function committedUnanswered(sql: postgres.Sql, t: Tracker): Promise<Set<string>> {
  const tags = [...t.messages.values()].filter((m) => m.status === undefined).map((m) => m.tag);
  if (tags.length === 0) return new Set();
  const rows = await sql<{ body: string }[]>`select body from messages where body = any(${tags}::text[])`;
  return new Set(rows.map((r) => r.body));
}

async function lockWaiters(sql: postgres.Sql): Promise<number> {
  const [r] = await sql<{ n: number }[]>`
    select count(*)::int as n from pg_stat_activity where wait_event_type = 'Lock' and pid <> pg_backend_pid()`;
  return r?.n ?? 0;
}

/** Takes a lock that makes every write to `table` wait (selects go on); resolves with its release. */
async function holdWrites(sql: postgres.Sql, table: string): Promise<() => Promise<void>> {
  let release!: () => void;
  const held = new Promise<void>((r) => (release = r));
  let locked!: () => void;
  const taken = new Promise<void>((r) => (locked = r));
  const tx = sql.begin(async (tx) => {
    await tx`lock table ${tx(table)} in share mode`;
    locked();
    await held;
  });
  await Promise.race([taken, tx]);
  return async () => {
    release();
    await tx.catch(() => {});
  };
}

export const FAULTS: Fault[] = [
  {
    name: "kill-receiver",
    description: `kill -9 of the receiving node, restarted at once (${KILLS} times, 2 s apart)`,
    run: (c) => killRepeatedly(c.receiving),
  },
  {
    name: "kill-sender",
    description: `kill -9 of the sending node between a send's commit and its append, restarted at once (${KILLS} times, 2 s apart)`,
    strandsSends: true,
    async run(c, t) {
      for (let i = 0; i < KILLS; i++) {
        if (i > 0) await sleep(2_000);
        await killMidSend(c, t);
      }
    },
  },
  {
    name: "redis-empty",
    description: "Redis killed (-9), down 3 s, restarted empty",
    async run(c) {
      await c.redis.kill();
      await sleep(3_000);
      await c.redis.restart();
    },
  },
  {
    name: "flushall",
    description: "FLUSHALL of Redis",
    run: (c) => c.redis.flushall(),
  },
  {
    name: "postgres-stop",
    description: "Postgres stopped (-m immediate) for 10 s with acks under way, started again",
    meetsAcks: true,
    async run(c, _t, acks) {
      // acks under way when it stops, every time: the receivers hold theirs for 0.5 s and let them go at the stop
      acks.hold();
      try {
        await sleep(500);
        await c.pg.stop();
      } finally {
        acks.open();
      }
      await sleep(10_000);
      await c.pg.restart();
    },
  },
  {
    name: "sigterm-receiver",
    description: "SIGTERM of the receiving node (graceful), restarted",
    graceful: true,
    run: (c) => restart(c.receiving, "SIGTERM"),
  },
  {
    name: "sigterm-sender",
    description: "SIGTERM of the sending node (graceful), restarted",
    graceful: true,
    run: (c) => restart(c.sending, "SIGTERM"),
  },
];

export interface RunOptions {
  pairs: number;
  /** Sends per second per sender. */
  perSecond: number;
  warmupMs: number;
  afterMs: number;
  log: (line: string) => void;
}

/** Brings the cluster back to health before a fault: servers up, both nodes running and ready. */
export async function ensureHealthy(c: Cluster, timeoutMs = 30_000): Promise<void> {
  if (!(await c.redis.ping().catch(() => false))) await c.redis.restart();
  for (const node of [c.sending, c.receiving]) if (!node.alive) await node.start();
  const deadline = Date.now() + timeoutMs;
  for (const node of [c.sending, c.receiving]) {
    for (;;) {
      const r = await fetch(`${node.url}/readyz`, { signal: AbortSignal.timeout(3000) }).catch(() => undefined);
      await r?.arrayBuffer();
      if (r?.status === 200) break;
      if (Date.now() > deadline) throw new Error(`node ${node.name} not ready within ${timeoutMs} ms`);
      await sleep(100);
    }
  }
}

export async function runFault(c: Cluster, fault: Fault, o: RunOptions): Promise<FaultResult> {
  await ensureHealthy(c);
  const logsFrom = Date.now(); // the nodes' log lines from here to the end of the drain are the fault's
  const t = new Tracker(fault.name);
  const senders: Agent[] = [];
  const receivers: Agent[] = [];
  for (let i = 0; i < o.pairs; i++) {
    senders.push(await register(c.sending.url, `chaos-${fault.name}-s${i}`));
    receivers.push(await register(c.receiving.url, `chaos-${fault.name}-r${i}`));
  }
  // half the receivers long poll, half use the WebSocket; receivers first, so nothing waits for them
  const acks = new AckGate();
  const actors: Actor[] = receivers.map((r, i) =>
    i % 2 === 0 ? startPoller(t, c.receiving.url, r, acks) : startWsReceiver(t, c.receiving.url, r, acks),
  );
  // pairs 2 and 3 of every four talk in a group of the two (one a poller, one a WebSocket receiver): a group
  // message is stored once and reaches its member past its cursor, by a different path from a direct one's
  const groups = await Promise.all(
    senders.map((s, i) => (i % 4 >= 2 ? createGroup(c.sending.url, s, receivers[i]!) : undefined)),
  );
  const sendersRunning = senders.map((s, i) =>
    startSender(t, c.sending.url, s, receivers[i]!, i, o.perSecond, groups[i]),
  );
  await sleep(o.warmupMs);

  const injectAt = Date.now();
  o.log(`  ${fault.name}: injecting (${fault.description})`);
  await fault.run(c, t, acks);
  const phases: Phases = { injectAt, endAt: Date.now() };
  o.log(`  ${fault.name}: undone after ${((phases.endAt - injectAt) / 1000).toFixed(1)} s; traffic goes on`);
  await sleep(o.afterMs);

  await Promise.all(sendersRunning.map((s) => s.stop()));
  const drainStart = Date.now();
  while (!t.drained(Date.now())) await sleep(100);
  // sends that were committed without an answer (their node died): each must arrive too, within 10 s
  const committed = (await durable(c.pg.url, fault.name, receivers)).committed;
  while (!t.drained(Date.now(), committed)) await sleep(100);
  await sleep(1_000); // a moment more for late redeliveries to show
  o.log(`  ${fault.name}: drained in ${((Date.now() - drainStart) / 1000).toFixed(1)} s`);
  const logs = [c.sending, c.receiving].flatMap((n) => n.linesSince(logsFrom));
  await Promise.all(actors.map((a) => a.stop()));

  return judge(t, fault, phases, await durable(c.pg.url, fault.name, receivers), logs);
}

/**
 * What Postgres holds for this fault's messages: which were committed (when the first was made, and how many rows
 * each body has: more than one is a duplicate), and which it still counts as unacked.
 */
export async function durable(url: string, fault: string, receivers: Agent[]): Promise<Durable> {
  const sql = postgres(url, { max: 1, onnotice: () => {}, connect_timeout: 5 });
  try {
    const bodies = await sql<{ body: string; n: number; made: Date }[]>`
      select body, count(*)::int as n, min(created_at) as made from messages where body like ${`chaos ${fault} %`} group by body`;
    const ids = receivers.map((r) => r.id);
    const rows = await sql<{ id: string }[]>`
      select m.id::text from stream_cursors c join messages m on m.seq > c.acked_seq and (case when c.thread_id = 0
        then m.recipient = c.member else m.recipient is null and m.thread_id = c.thread_id end)
      where c.member = any(${ids}::text[]) and m.sender <> c.member and not exists (
        select 1 from stream_acks a where a.member = c.member and a.thread_id = c.thread_id and a.seq = m.seq)`;
    return {
      committed: new Set(bodies.map((r) => r.body)),
      unacked: new Set(rows.map((r) => r.id)),
      createdAt: new Map(bodies.map((r) => [r.body, r.made.getTime()])),
      copies: new Map(bodies.filter((r) => r.n > 1).map((r) => [r.body, r.n])),
    };
  } finally {
    await sql.end({ timeout: 1 });
  }
}
