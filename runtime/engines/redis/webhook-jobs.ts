// The webhook jobs on Redis (runtime/engines/webhook-jobs.ts): a stream `wh:{q}:jobs` read by the consumer group
// `workers`, and `wh:{q}:queued` naming each agent's job, so an agent has one job at a time. A node takes new jobs with
// XREADGROUP, renews those it holds (scripts/webhookRenew-1.lua: only those still its own), and takes a dead node's
// with XAUTOCLAIM once they have gone unrenewed for the idle time (on Redis's clock). A done job is deleted, so the
// stream holds one entry per agent with an endpoint at most.
import type { Keys } from "./keys.ts";
import type { ScriptedRedis } from "./scripts.ts";
import { WEBHOOK_GROUP, type WebhookJob, type WebhookJobs } from "../webhook-jobs.ts";

type StreamEntries = [string, string[] | null][];

function jobsOf(entries: StreamEntries | null | undefined): WebhookJob[] {
  const out: WebhookJob[] = [];
  for (const [entry, fields] of entries ?? []) {
    // a job deleted meanwhile comes back without its fields: nothing to do
    if (fields === null) continue;
    const i = fields.indexOf("a");
    if (i >= 0 && fields[i + 1] !== undefined) out.push({ entry, agent: fields[i + 1]! });
  }
  return out;
}

const noGroup = (err: unknown) => err instanceof Error && /NOGROUP/.test(err.message);

export class RedisWebhookJobs implements WebhookJobs {
  constructor(
    private readonly redis: ScriptedRedis,
    private readonly keys: Keys,
  ) {}

  enqueue(agents: readonly string[]): Promise<number> {
    if (agents.length === 0) return Promise.resolve(0);
    return this.redis.webhookEnqueue(this.keys.webhookJobs(), this.keys.webhookQueued(), WEBHOOK_GROUP, ...agents);
  }

  async take(consumer: string, count: number): Promise<WebhookJob[]> {
    try {
      const r = (await this.redis.xreadgroup(
        "GROUP",
        WEBHOOK_GROUP,
        consumer,
        "COUNT",
        count,
        "STREAMS",
        this.keys.webhookJobs(),
        ">",
      )) as [string, StreamEntries][] | null;
      return jobsOf(r?.[0]?.[1]);
    } catch (err) {
      // no group yet (nothing queued since the stream was made, or flushed): nothing to take
      if (noGroup(err)) return [];
      throw err;
    }
  }

  async reclaim(consumer: string, idleMs: number, count: number): Promise<WebhookJob[]> {
    try {
      const r = (await this.redis.xautoclaim(
        this.keys.webhookJobs(),
        WEBHOOK_GROUP,
        consumer,
        idleMs,
        "0-0",
        "COUNT",
        count,
      )) as [string, StreamEntries, string[]?];
      return jobsOf(r[1]);
    } catch (err) {
      if (noGroup(err)) return [];
      throw err;
    }
  }

  async renew(consumer: string, entries: readonly string[]): Promise<Set<string>> {
    if (entries.length === 0) return new Set();
    return new Set(await this.redis.webhookRenew(this.keys.webhookJobs(), WEBHOOK_GROUP, consumer, ...entries));
  }

  async finish(job: WebhookJob): Promise<void> {
    await this.redis.webhookFinish(
      this.keys.webhookJobs(),
      this.keys.webhookQueued(),
      WEBHOOK_GROUP,
      job.entry,
      job.agent,
    );
  }
}
