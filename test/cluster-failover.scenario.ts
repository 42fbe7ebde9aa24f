// A Redis Cluster master killed (SIGKILL) under steady send traffic: every send answered 201 is delivered in the
// end, no answer is a 500 (a send that cannot be served while the shard fails over answers 503), and sends succeed
// again within the cluster's failover time. Run by test/cluster.test.ts on its private cluster.
import type { Test } from "tap";
import { call } from "./helpers/http.ts";
import { startTestNode } from "./helpers/node.ts";
import type { RedisCluster } from "./helpers/redis-cluster.ts";
import { registerAgents, undelivered } from "./messaging-helpers.ts";
import { until } from "./helpers/wait.ts";

const SENDERS = 8;
const RECIPIENTS = 12;
/** Between two sends of one sender: 8 senders at ~6/s each stay under the 10-a-second limit (a pace, not a wait). */
const PAUSE_MS = 160;

interface Outcome {
  sender: number;
  at: number;
  status: number;
  ms: number;
}

export async function failover(t: Test, cluster: RedisCluster): Promise<void> {
  const node = await startTestNode(t, { env: { REDIS_URL: cluster.url } });
  const senders = await registerAgents(node.url, SENDERS, "sender");
  const recipients = await registerAgents(node.url, RECIPIENTS, "recipient");

  const accepted = new Map<string, Set<string>>(recipients.map((r) => [r.id, new Set()]));
  const outcomes: Outcome[] = [];
  let stop = false;
  const loops = senders.map(async (s, i) => {
    for (let n = 0; !stop; n++) {
      const to = recipients[(i + n) % RECIPIENTS]!;
      const sent = performance.now();
      const r = await call(node.url, "POST", "/v1/messages", {
        token: s.token,
        json: { to: to.id, body: `${i}.${n}` },
      }).catch(() => null);
      const status = r?.status ?? 0;
      outcomes.push({ sender: i, at: performance.now(), status, ms: performance.now() - sent });
      if (status === 201) accepted.get(to.id)!.add(r!.body.id as string);
      await new Promise((res) => setTimeout(res, PAUSE_MS));
    }
  });

  /** Whether every sender had a send answered 201 after `since`. */
  const everySender201 = (since: number) =>
    senders.every((_, i) => outcomes.some((o) => o.sender === i && o.at > since && o.status === 201));
  let killedAt = 0;
  let promotedAt = 0;
  let recovered = false;
  try {
    // steady traffic first: every sender's sends answered
    await until(() => everySender201(0), { ms: 10_000, every: 10, what: "a 201 for every sender before the kill" });
    const master = cluster.nodes.find((n) => n.role === "master")!;
    killedAt = performance.now();
    await cluster.killMaster(master.port);
    const failoverMs = await cluster.waitForFailover(master.port);
    promotedAt = killedAt + failoverMs;
    t.comment(`master ${master.port} killed; a replica took over after ${failoverMs.toFixed(0)} ms`);
    // traffic goes on until every sender has a send answered 201 past the two seconds after the promotion in which
    // 503s may still come (the slot map refresh; checked below), bounded
    recovered = await until(() => everySender201(promotedAt + 2000), { ms: 12_000, every: 50 }).then(
      () => true,
      () => false,
    );
  } finally {
    stop = true;
    await Promise.all(loops);
  }
  t.ok(recovered, "every sender's sends succeed again after the failover");

  const bad = outcomes.filter((o) => o.status !== 201 && o.status !== 503);
  t.same(bad, [], "every send answered 201 or 503: no 500, no hang");
  // a generous bound that tells an answer from a hang (the node's backend timeouts are 1 s, a few retries at most)
  const slowest = Math.max(...outcomes.map((o) => o.ms));
  t.ok(slowest < 6000, `every send answered, the slowest in ${slowest.toFixed(0)} ms`);
  const outside = outcomes.filter((o) => o.status === 503 && (o.at < killedAt || o.at > promotedAt + 2000));
  t.same(outside, [], "503s only between the kill and two seconds after the promotion (the slot map refresh)");
  const firstBack = outcomes.find((o) => o.at > promotedAt && o.status === 201);
  t.ok(firstBack, "sends succeed again after the failover");
  const total = [...accepted.values()].reduce((n, s) => n + s.size, 0);
  t.ok(total > 20, `${total} sends answered 201 (${outcomes.filter((o) => o.status === 503).length} 503s)`);

  // every 201'd message reaches its recipient: a mailbox whose append failed is rebuilt from Postgres
  const missing = await undelivered(node.url, recipients, accepted);
  t.same(missing, [], "no 201'd message lost");
}
