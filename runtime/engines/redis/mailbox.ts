// Redis mailboxes: one stream per principal holding only unacknowledged messages (an ack deletes the entry),
// bounded by `capacity`, plus an index hash (seed state, entry ids, delivery counts). Every operation is one
// script, so one round trip; an append for many recipients (a group send) too. The append script also
// publishes the wake-up (a comma-separated list of principals), on one channel every node subscribes to once:
// one wake-up naming every recipient. Its keys span many hash tags, so it needs a single Redis (not a Cluster).
import type { AppendItem, MailboxEngine, MailboxEntry, SeedEntry } from "../mailbox.ts";
import type { PubSub } from "../pubsub.ts";
import type { Keys } from "./keys.ts";
import type { ScriptedRedis } from "./scripts.ts";

export const WAKE_CHANNEL = "wake";

export interface RedisMailboxOptions {
  /** Most entries a mailbox holds before it spills to Postgres. */
  capacity?: number;
  /** A mailbox untouched this long expires (it is rebuilt from Postgres when needed). */
  idleTtlMs?: number;
}

export class RedisMailboxes implements MailboxEngine {
  readonly capacity: number;
  private readonly ttl: number;

  constructor(
    private readonly redis: ScriptedRedis,
    private readonly keys: Keys,
    private readonly pubsub: PubSub,
    opts: RedisMailboxOptions = {},
  ) {
    this.capacity = opts.capacity ?? 10_000;
    this.ttl = opts.idleTtlMs ?? 30 * 86_400_000;
  }

  private get refill(): number {
    return Math.max(1, Math.floor(this.capacity / 2));
  }

  async append(items: AppendItem[]): Promise<void> {
    if (items.length === 0) return;
    // One script call whatever the number of recipients; a payload shared by many (a group send) goes once.
    const keys: string[] = [];
    const payloads: string[] = [];
    const refs = new Map<string, number>();
    const perItem: (string | number)[] = [];
    for (const it of items) {
      keys.push(this.keys.mailbox(it.principal), this.keys.mailboxIndex(it.principal));
      let ref = refs.get(it.payload);
      if (ref === undefined) {
        ref = payloads.push(it.payload);
        refs.set(it.payload, ref);
      }
      perItem.push(it.id, ref);
    }
    const wake = [...new Set(items.map((i) => i.principal))].join(",");
    const channel = this.keys.channel(WAKE_CHANNEL);
    await this.redis.mailboxAppend(keys.length, ...keys, this.capacity, this.ttl, channel, wake, payloads.length, ...payloads, ...perItem);
  }

  async fetch(principal: string, limit: number, cursor: string | null): Promise<MailboxEntry[] | null> {
    const r = await this.redis.mailboxFetch(this.keys.mailbox(principal), this.keys.mailboxIndex(principal), cursor ?? "", limit, this.ttl, this.refill);
    if (typeof r === "number") return null;
    const out: MailboxEntry[] = [];
    for (let i = 0; i + 3 < r.length; i += 4) {
      out.push({ cursor: String(r[i]), id: String(r[i + 1]), payload: String(r[i + 2]), deliveryCount: Number(r[i + 3]) });
    }
    return out;
  }

  async seed(principal: string, entries: SeedEntry[], complete: boolean): Promise<void> {
    const rows: (string | number)[] = [];
    for (const e of entries) rows.push(e.id, e.payload, e.deliveryCount);
    await this.redis.mailboxSeed(this.keys.mailbox(principal), this.keys.mailboxIndex(principal), complete ? "1" : "p", this.capacity, this.ttl, this.refill, ...rows);
  }

  async ack(principal: string, id: string): Promise<boolean> {
    return (await this.redis.mailboxAck(this.keys.mailbox(principal), this.keys.mailboxIndex(principal), id)) === 1;
  }

  async clear(principal: string): Promise<void> {
    await this.redis
      .multi()
      .del(this.keys.mailbox(principal), this.keys.mailboxIndex(principal))
      .publish(this.keys.channel(WAKE_CHANNEL), principal)
      .exec();
  }

  onWake(handler: (principal: string) => void): Promise<() => Promise<void>> {
    return this.pubsub.subscribe(WAKE_CHANNEL, (buf) => {
      for (const p of buf.toString().split(",")) handler(p);
    });
  }
}
