// Write-behind of delivery counts: mailboxes count every hand-out; the counts reach Postgres in one batched
// statement every little while (off the delivery path), so a mailbox rebuilt after a Redis flush keeps
// counting where it was (give or take the last batch). A count only matters while its message is unacknowledged:
// an ack drops the pending count, so a message acknowledged soon after delivery (the usual case) costs no
// count write at all.
import type { Sql } from "../db/client.ts";
import type { Logger } from "../log.ts";
import { writeDeliveryCounts } from "./store.ts";

const MAX_PENDING = 20_000;

export class DeliveryCountLog {
  private pending = new Map<string, { recipient: string; id: string; count: number }>();
  private timer: NodeJS.Timeout | undefined;
  private flushing: Promise<void> = Promise.resolve();

  constructor(
    private readonly sql: Sql,
    private readonly log: Logger,
    private readonly intervalMs = 250,
  ) {}

  record(recipient: string, entries: { id: string; deliveryCount: number }[]): void {
    for (const e of entries) {
      const key = `${recipient} ${e.id}`;
      const cur = this.pending.get(key);
      if (!cur || cur.count < e.deliveryCount) this.pending.set(key, { recipient, id: e.id, count: e.deliveryCount });
    }
    if (this.pending.size >= MAX_PENDING) {
      void this.flush();
    } else if (!this.timer) {
      this.timer = setTimeout(() => void this.flush(), this.intervalMs);
      this.timer.unref();
    }
  }

  /** The message was acknowledged: its count need not reach Postgres. */
  forget(recipient: string, id: string): void {
    this.pending.delete(`${recipient} ${id}`);
  }

  flush(): Promise<void> {
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    if (this.pending.size === 0) return this.flushing;
    const rows = [...this.pending.values()];
    this.pending = new Map();
    this.flushing = this.flushing.then(() =>
      writeDeliveryCounts(this.sql, rows).catch((err) => this.log.warn({ err, rows: rows.length }, "delivery counts not written")),
    );
    return this.flushing;
  }
}
