// The webhook jobs in process (runtime/engines/webhook-jobs.ts): the embedded mode's one node, or nodes of a test
// sharing one instance. Idle times run on the given clock.
import type { WebhookJob, WebhookJobs } from "../webhook-jobs.ts";

interface Entry {
  agent: string;
  /** The consumer holding it; undefined while queued. */
  holder: string | undefined;
  /** When its holder took or renewed it. */
  touched: number;
}

export class MemoryWebhookJobs implements WebhookJobs {
  private seq = 0;
  /** In the order queued. */
  private readonly entries = new Map<string, Entry>();
  private readonly queued = new Map<string, string>();

  constructor(private readonly now: () => number = Date.now) {}

  async enqueue(agents: readonly string[]): Promise<number> {
    let n = 0;
    for (const agent of agents) {
      if (this.queued.has(agent)) continue;
      const entry = `${++this.seq}-0`;
      this.entries.set(entry, { agent, holder: undefined, touched: 0 });
      this.queued.set(agent, entry);
      n++;
    }
    return n;
  }

  async take(consumer: string, count: number): Promise<WebhookJob[]> {
    return this.hand(consumer, count, (e) => e.holder === undefined);
  }

  async reclaim(consumer: string, idleMs: number, count: number): Promise<WebhookJob[]> {
    const now = this.now();
    return this.hand(consumer, count, (e) => e.holder !== undefined && now - e.touched >= idleMs);
  }

  async renew(consumer: string, entries: readonly string[]): Promise<Set<string>> {
    const held = new Set<string>();
    for (const id of entries) {
      const e = this.entries.get(id);
      if (e?.holder !== consumer) continue;
      e.touched = this.now();
      held.add(id);
    }
    return held;
  }

  async finish(job: WebhookJob): Promise<void> {
    this.entries.delete(job.entry);
    if (this.queued.get(job.agent) === job.entry) this.queued.delete(job.agent);
  }

  private hand(consumer: string, count: number, pick: (e: Entry) => boolean): WebhookJob[] {
    const out: WebhookJob[] = [];
    for (const [entry, e] of this.entries) {
      if (out.length >= count) break;
      if (!pick(e)) continue;
      e.holder = consumer;
      e.touched = this.now();
      out.push({ entry, agent: e.agent });
    }
    return out;
  }
}
