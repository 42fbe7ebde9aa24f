// The webhook delivery jobs shared by the nodes: one job per agent with an active endpoint, held by one node at a
// time, which delivers that agent's events while it holds it (runtime/webhooks/dispatcher.ts). On Redis the jobs are
// a stream read by a consumer group (XREADGROUP hands a new job to one node; a node renews what it holds; XAUTOCLAIM
// hands the jobs of a node silent past the idle time to another); in memory, the same in process. Postgres stays the
// truth: a job lost with Redis is queued again by the nodes' sweep over the endpoints (runtime/webhooks/webhooks-store.ts).

/** One agent's delivery job: the stream entry that holds it, and the agent. */
export interface WebhookJob {
  entry: string;
  agent: string;
}

export interface WebhookJobs {
  /** Queue a job for each of `agents` that has none (queued or held): one per agent at a time. How many were queued. */
  enqueue(agents: readonly string[]): Promise<number>;
  /** Up to `count` queued jobs no node took yet, now held by `consumer`. */
  take(consumer: string, count: number): Promise<WebhookJob[]>;
  /** Up to `count` jobs whose holder has not renewed them for `idleMs` (a node that died), now held by `consumer`. */
  reclaim(consumer: string, idleMs: number, count: number): Promise<WebhookJob[]>;
  /** Renew the jobs `consumer` holds among `entries`: those it still holds (one missing was taken over, or lost). */
  renew(consumer: string, entries: readonly string[]): Promise<Set<string>>;
  /** The job is done (its endpoint removed or disabled): dropped, so the agent may be queued again. */
  finish(job: WebhookJob): Promise<void>;
}

/** The consumer group every node reads the jobs in. */
export const WEBHOOK_GROUP = "workers";
