// One agent's webhook deliveries, run by the node that holds its job (runtime/webhooks/dispatcher.ts): its
// unacknowledged messages read as a long poll reads them (the same read, recording the hand-out, so a message's
// delivery_count counts attempts), POSTed in order per stream (the inbox, each group: one lane each, at most
// `max_connections` lanes at once), and each 2xx acknowledged through the hub exactly as POST /v1/messages/{id}/ack.
// A failure stops its lane (what follows waits behind it) and the next pass comes after a backoff; a run of failures
// longer than the disable delay disables the endpoint. Between passes it waits on its streams' wake-ups (no Redis or
// Postgres call per message); `when_offline` sends only what no socket or poll acknowledged within `offline_after`.
import { idTime } from "../ids.ts";
import type { Logger } from "../log.ts";
import type { Messaging } from "../messaging/hub.ts";
import type { StreamEntry } from "../messaging/stream-store.ts";
import type { StreamId } from "../messaging/stream-id.ts";
import type { Sql } from "../db/client.ts";
import { WEBHOOK_LIMITS } from "../limits/policies.ts";
import { FailureRun } from "./backoff.ts";
import { messageEvent, type WebhookEvent } from "./events.ts";
import type { AttemptOutcome, WebhookSender } from "./sender.ts";
import {
  clearFailing,
  disableWebhook,
  getWebhook,
  liveSecrets,
  markFailing,
  type AttemptRecord,
  recordAttempts,
  type WebhookRow,
} from "./webhooks-store.ts";

/** A held agent waits at most this long between reads (a group joined meanwhile has its own wake-ups from then). */
const IDLE_RECHECK_MS = 30_000;

export interface DeliveryDeps {
  sql: Sql;
  hub: Messaging;
  sender: WebhookSender;
  log: Logger;
  now: () => number;
  disableAfterMs: number;
  /** The endpoint was disabled: tell every node (and the agent's connections). */
  disabled(agent: string, reason: string): Promise<void>;
}

export type DeliveryEnd = "gone" | "disabled";

/** Run `work` over `items`, at most `limit` at once. */
async function limited<T>(items: T[], limit: number, work: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  const runner = async () => {
    while (next < items.length) await work(items[next++]!);
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, runner));
}

export class AgentDelivery {
  private stopped = false;
  private reload = true;
  private release: (() => void) | undefined;
  private running: Promise<void> | undefined;

  constructor(
    private readonly deps: DeliveryDeps,
    readonly agent: string,
    /** Called once when it ends by itself: its endpoint is gone (or disabled, or never there). */
    private readonly ended: (why: DeliveryEnd) => void,
  ) {}

  start(): void {
    this.running ??= this.run().catch((err: unknown) =>
      this.deps.log.error({ err, agent: this.agent }, "webhook delivery failed"),
    );
  }

  /** The endpoint was set again (replaced, re-enabled): read it before the next pass, which comes at once. */
  changed(): void {
    this.reload = true;
    this.release?.();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    this.release?.();
    await this.running;
  }

  private async run(): Promise<void> {
    const { deps, agent } = this;
    const run = new FailureRun(deps.disableAfterMs);
    let row: WebhookRow | null = null;
    let pause = 0;
    while (!this.stopped) {
      if (this.reload) {
        this.reload = false;
        pause = 0;
        row = await this.retrying(() => getWebhook(deps.sql, agent));
        if (this.stopped) return;
        if (row === null || row.status !== "active") return this.ended("gone");
        run.since = row.failing_since?.getTime();
      }
      if (row === null) return;
      if (pause > 0) {
        await this.wait(pause, false);
        pause = 0;
        continue;
      }
      let woken = false;
      const removers: (() => void)[] = [];
      try {
        // the wake-ups are in place before the read: a message committed meanwhile ends the wait below at once
        for (const s of await deps.hub.streams.streamsOf(agent))
          removers.push(
            deps.hub.waiters.add(s, () => {
              woken = true;
              this.release?.();
            }),
          );
        const pass = await this.pass(row, run);
        if (pass.disabled) return this.ended("disabled");
        if (pass.retryInMs !== undefined) {
          pause = pass.retryInMs;
          continue;
        }
        if (pass.full) continue;
        let waitMs = pass.nextAtMs === undefined ? IDLE_RECHECK_MS : Math.max(0, pass.nextAtMs - deps.now());
        waitMs = Math.min(waitMs, IDLE_RECHECK_MS);
        if (row.mode === "when_offline") {
          // a new message is for the webhook only once it has waited offline_after unacknowledged: read it then
          const started = deps.now();
          while (!this.stopped && !this.reload) {
            woken = false;
            const left = waitMs - (deps.now() - started);
            if (left <= 0) break;
            await this.wait(left, true);
            if (woken) waitMs = Math.min(waitMs, deps.now() - started + row.offline_after * 1000);
          }
        } else if (!woken) {
          await this.wait(waitMs, true);
        }
      } catch (err) {
        deps.log.warn({ err, agent }, "webhook delivery pass failed; retrying");
        pause = 1000;
      } finally {
        for (const r of removers) r();
      }
    }
  }

  /**
   * One pass: read what is unacknowledged, POST it lane by lane. Whether it read a full batch (more may wait), when the
   * next message becomes due (`when_offline`), the pause before a retry after a failure, or that it disabled.
   */
  private async pass(
    row: WebhookRow,
    run: FailureRun,
  ): Promise<{ full: boolean; nextAtMs?: number; retryInMs?: number; disabled?: boolean }> {
    const { deps, agent } = this;
    if (!row.events.includes("message.created")) return { full: false };
    const batch = WEBHOOK_LIMITS.batch;
    const read = await deps.hub.poll(agent, batch, 0, () => {});
    const now = deps.now();
    let nextAtMs: number | undefined;
    const lanes = new Map<StreamId, StreamEntry[]>();
    const late = new Set<StreamId>();
    for (const e of read.entries) {
      if (late.has(e.stream)) continue;
      if (row.mode === "when_offline") {
        const due = idTime(BigInt(e.id)) + row.offline_after * 1000;
        if (due > now) {
          // this stream's later messages wait behind it (order)
          late.add(e.stream);
          nextAtMs = Math.min(nextAtMs ?? due, due);
          continue;
        }
      }
      let lane = lanes.get(e.stream);
      if (lane === undefined) lanes.set(e.stream, (lane = []));
      lane.push(e);
    }
    let failed = false;
    let delivered = 0;
    const attempts: AttemptRecord[] = [];
    try {
      await limited([...lanes.values()], row.max_connections, async (lane) => {
        // each 2xx's ack goes to the hub's ack lane at once and the next POST does not wait for it; the lane ends
        // once every ack it sent has committed, so the next read never hands an acknowledged message out again
        const acks: Promise<unknown>[] = [];
        try {
          for (const e of lane) {
            if (this.stopped || this.reload) return;
            const o = await this.attempt(row, messageEvent(e), e.deliveryCount, attempts);
            if (!o.ok) {
              failed = true;
              return;
            }
            delivered++;
            acks.push(deps.hub.ack(agent, BigInt(e.id)));
          }
        } finally {
          await Promise.all(acks);
        }
      });
    } finally {
      // the pass's attempts in one statement
      await recordAttempts(deps.sql, agent, attempts, WEBHOOK_LIMITS.deliveriesKept).catch((err: unknown) =>
        deps.log.warn({ err, agent }, "webhook attempts not recorded"),
      );
    }
    // stopped meanwhile (the node closing cuts attempts short): not the endpoint's failure
    if (this.stopped) return { full: false };
    if (failed) {
      if (run.since === undefined) run.since = (await markFailing(deps.sql, agent, new Date(now)))?.getTime() ?? now;
      const r = run.failed(deps.now());
      if (r.disable) {
        const reason = `failing: every attempt failed for ${Math.round(deps.disableAfterMs / 1000)} s`;
        if (await disableWebhook(deps.sql, agent, reason, new Date(deps.now()))) await deps.disabled(agent, reason);
        return { full: false, disabled: true };
      }
      return { full: false, retryInMs: r.retryInMs };
    }
    if (delivered > 0 && run.succeeded()) await clearFailing(deps.sql, agent);
    // a full read is followed at once, unless what it left is waiting for offline_after (read again when due)
    return { full: read.entries.length >= batch && nextAtMs === undefined, nextAtMs };
  }

  /** POST one event; its attempt goes into `attempts` (written at the pass's end). */
  private async attempt(
    row: WebhookRow,
    event: WebhookEvent,
    attempt: number,
    attempts: AttemptRecord[],
  ): Promise<AttemptOutcome> {
    const { deps } = this;
    const o = await deps.sender.send(row.url, liveSecrets(row, deps.now()), event.id, event.body);
    attempts.push({
      id: event.id,
      type: event.type,
      attempt,
      status: o.status,
      ok: o.ok,
      error: o.error,
      latency_ms: o.latencyMs,
      at: new Date(deps.now()),
    });
    return o;
  }

  /** Wait `ms`, ended early by a stop, a change or (`wakeable`) a wake-up. */
  private async wait(ms: number, wakeable: boolean): Promise<void> {
    if (this.stopped || this.reload) return;
    await new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, ms);
      this.release = () => {
        if (!wakeable && !this.stopped && !this.reload) return;
        clearTimeout(timer);
        resolve();
      };
    });
    this.release = undefined;
  }

  /** A read that an outage failed is tried again every second until it answers (or the delivery stops). */
  private async retrying<T>(read: () => Promise<T>): Promise<T | null> {
    for (;;) {
      try {
        return await read();
      } catch (err) {
        this.deps.log.warn({ err, agent: this.agent }, "webhook endpoint not read; retrying");
        await this.wait(1000, false);
        if (this.stopped) return null;
      }
    }
  }
}
