// A node's part in webhook delivery: it knows which agents have an active endpoint (read at start, kept fresh by the
// `webhook` announcement and the sweep), takes delivery jobs from the shared queue (runtime/engines/webhook-jobs.ts),
// and runs an AgentDelivery for each job it holds. While it knows of no endpoint it makes no call at all, so a
// deployment without webhooks pays nothing; with some, on its timers: every third of the claim's idle time it renews
// what it holds, takes over a dead node's jobs (XAUTOCLAIM) and takes new ones; every sweep it reads the active
// endpoints from Postgres and queues a job for each that has none (a Redis flush loses no delivery).
import { randomUUID } from "node:crypto";
import { CHANNELS, type ChannelMessage, listen, publish } from "../engines/node-channels.ts";
import type { WebhookJob } from "../engines/webhook-jobs.ts";
import type { Services } from "../services.ts";
import { WEBHOOK_LIMITS } from "../limits/policies.ts";
import { AgentDelivery } from "./agent-delivery.ts";
import { pingEvent } from "./events.ts";
import { type AttemptOutcome, WebhookSender } from "./sender.ts";
import { activeAgents, getWebhook, liveSecrets, recordAttempts } from "./webhooks-store.ts";

/** Jobs taken in one call. */
const TAKE = 16;

type Deps = Pick<Services, "sql" | "engines" | "hub" | "log" | "now" | "config" | "ids">;

export class WebhookDispatcher {
  /** This node as a consumer of the jobs: a new name per start, so a restarted node's old jobs go by reclaim. */
  readonly consumer = `node-${randomUUID()}`;
  readonly sender: WebhookSender;
  private readonly known = new Set<string>();
  private readonly held = new Map<string, { job: WebhookJob; delivery: AgentDelivery }>();
  private timers: NodeJS.Timeout[] = [];
  private unsubscribe: (() => Promise<void>) | undefined;
  private closed = false;
  private ticking = false;

  constructor(private readonly svc: Deps) {
    const c = svc.config;
    this.sender = new WebhookSender({
      allowPrivate: c.FLOCK_WEBHOOK_ALLOW_PRIVATE,
      timeoutMs: c.FLOCK_WEBHOOK_TIMEOUT_MS,
      bodyCap: WEBHOOK_LIMITS.responseBodyBytes,
      now: svc.now,
    });
  }

  async start(): Promise<void> {
    this.unsubscribe = await listen(this.svc.engines.pubsub, CHANNELS.webhook, this.svc.log, (e) => this.onChange(e));
    for (const a of await activeAgents(this.svc.sql)) this.known.add(a);
    if (this.known.size > 0) {
      this.arm();
      void this.sweep();
    }
  }

  /** The agents whose jobs this node holds now. */
  holding(): string[] {
    return [...this.held.keys()];
  }

  /** An endpoint was set, removed or disabled on this node (after the commit): every node hears it. */
  async announce(agent: string, change: "set" | "removed" | "disabled", reason?: string): Promise<void> {
    try {
      if (change === "set") await this.svc.engines.webhookJobs.enqueue([agent]);
      await publish(this.svc.engines.pubsub, CHANNELS.webhook, { agent, change, ...(reason ? { reason } : {}) });
    } catch (err) {
      // Redis out of reach: the change stands (Postgres has it); this node knows it, and its sweep queues the job
      this.svc.log.warn({ err, agent, change }, "webhook change not announced; the sweep picks it up");
      if (change === "set") {
        this.known.add(agent);
        this.arm();
      }
    }
  }

  /** POST a signed `webhook.ping` to the agent's endpoint now: the attempt's outcome (recorded), null with none. */
  async ping(agent: string): Promise<(AttemptOutcome & { id: string }) | null> {
    const row = await getWebhook(this.svc.sql, agent);
    if (row === null) return null;
    const now = this.svc.now();
    const event = pingEvent(`ping_${this.svc.ids.nextRaw()}`, agent, now);
    const o = await this.sender.send(row.url, liveSecrets(row, now), event.id, event.body);
    await recordAttempts(
      this.svc.sql,
      agent,
      [
        {
          id: event.id,
          type: event.type,
          attempt: 1,
          status: o.status,
          ok: o.ok,
          error: o.error,
          latency_ms: o.latencyMs,
          at: new Date(now),
        },
      ],
      WEBHOOK_LIMITS.deliveriesKept,
    );
    return { ...o, id: event.id };
  }

  private onChange(e: ChannelMessage<typeof CHANNELS.webhook>): void {
    if (this.closed) return;
    const mine = this.held.get(e.agent);
    if (e.change === "set") {
      this.known.add(e.agent);
      this.arm();
      if (mine) mine.delivery.changed();
      else void this.take();
      return;
    }
    this.known.delete(e.agent);
    if (mine) void this.drop(e.agent, true);
  }

  /** The timers, while this node knows of an endpoint or holds a job. */
  private arm(): void {
    if (this.timers.length > 0 || this.closed) return;
    const c = this.svc.config;
    this.timers = [
      setInterval(() => void this.tick(), Math.max(50, Math.floor(c.FLOCK_WEBHOOK_CLAIM_IDLE_MS / 3))),
      setInterval(() => void this.sweep(), c.FLOCK_WEBHOOK_SWEEP_MS),
    ];
    for (const t of this.timers) t.unref();
  }

  private disarmIfIdle(): void {
    if (this.known.size > 0 || this.held.size > 0) return;
    for (const t of this.timers) clearInterval(t);
    this.timers = [];
  }

  /** Renew what is held (dropping what another node took over), take a dead node's jobs, then new ones. */
  private async tick(): Promise<void> {
    if (this.ticking || this.closed) return;
    this.ticking = true;
    const jobs = this.svc.engines.webhookJobs;
    try {
      const entries = [...this.held.values()].map((h) => h.job.entry);
      if (entries.length > 0) {
        const still = await jobs.renew(this.consumer, entries);
        for (const [agent, h] of this.held) if (!still.has(h.job.entry)) void this.drop(agent, false);
      }
      for (const job of await jobs.reclaim(this.consumer, this.svc.config.FLOCK_WEBHOOK_CLAIM_IDLE_MS, TAKE))
        this.hold(job);
      await this.take();
    } catch (err) {
      this.svc.log.warn({ err }, "webhook jobs not renewed; trying again");
    } finally {
      this.ticking = false;
      this.disarmIfIdle();
    }
  }

  /** Postgres's endpoints: the agents known, and a job queued for each that has none. */
  private async sweep(): Promise<void> {
    if (this.closed) return;
    try {
      const agents = await activeAgents(this.svc.sql);
      this.known.clear();
      for (const a of agents) this.known.add(a);
      // an endpoint removed or disabled whose announcement this node missed: its delivery here ends
      for (const held of this.held.keys()) if (!this.known.has(held)) void this.drop(held, true);
      if (agents.length > 0) await this.svc.engines.webhookJobs.enqueue(agents);
      await this.take();
    } catch (err) {
      this.svc.log.warn({ err }, "webhook sweep failed; trying again");
    } finally {
      this.disarmIfIdle();
    }
  }

  private async take(): Promise<void> {
    if (this.closed) return;
    try {
      for (const job of await this.svc.engines.webhookJobs.take(this.consumer, TAKE)) this.hold(job);
    } catch (err) {
      this.svc.log.warn({ err }, "webhook jobs not taken; trying again");
    }
  }

  private hold(job: WebhookJob): void {
    if (this.closed) return;
    const had = this.held.get(job.agent);
    if (had !== undefined) {
      if (had.job.entry !== job.entry) void this.svc.engines.webhookJobs.finish(job).catch(() => {});
      return;
    }
    this.arm();
    const delivery = new AgentDelivery(
      {
        sql: this.svc.sql,
        hub: this.svc.hub,
        sender: this.sender,
        log: this.svc.log,
        now: this.svc.now,
        disableAfterMs: this.svc.config.FLOCK_WEBHOOK_DISABLE_AFTER * 1000,
        disabled: (agent, reason) => this.announce(agent, "disabled", reason),
      },
      job.agent,
      () => {
        if (this.held.get(job.agent)?.job.entry === job.entry) this.held.delete(job.agent);
        void this.svc.engines.webhookJobs
          .finish(job)
          .catch((err: unknown) => this.svc.log.warn({ err }, "webhook job not finished"));
        this.disarmIfIdle();
      },
    );
    this.held.set(job.agent, { job, delivery });
    delivery.start();
  }

  /** Stop an agent's delivery here; `finish`: its job is done (the endpoint is gone), else another node has it. */
  private async drop(agent: string, finish: boolean): Promise<void> {
    const h = this.held.get(agent);
    if (h === undefined) return;
    this.held.delete(agent);
    await h.delivery.stop();
    if (finish) await this.svc.engines.webhookJobs.finish(h.job).catch(() => {});
    this.disarmIfIdle();
  }

  /**
   * Stop: the deliveries end, and each job held goes back to the queue at once (done, then queued anew), so another
   * node takes it without waiting for the claim's idle time. A node that dies instead leaves them to XAUTOCLAIM.
   */
  async close(): Promise<void> {
    this.closed = true;
    for (const t of this.timers) clearInterval(t);
    this.timers = [];
    await this.unsubscribe?.().catch(() => {});
    const held = [...this.held.values()];
    this.held.clear();
    // attempts under way end now (their sockets closed) rather than at their time-out
    const stopping = held.map((h) => h.delivery.stop());
    this.sender.close();
    await Promise.all(stopping);
    const jobs = this.svc.engines.webhookJobs;
    try {
      for (const h of held) await jobs.finish(h.job);
      if (held.length > 0) await jobs.enqueue(held.map((h) => h.job.agent));
    } catch (err) {
      this.svc.log.warn({ err }, "webhook jobs not handed back: other nodes reclaim them after the idle time");
    }
  }
}
