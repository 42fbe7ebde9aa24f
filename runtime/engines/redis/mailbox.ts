// Redis mailboxes: one stream per principal holding only unacknowledged messages (an ack deletes the entry),
// bounded by `capacity`, plus an index hash (seed state, entry ids, delivery counts). Every operation is one
// script, so one round trip; appends for many recipients go out as one pipeline. The append script also
// publishes the wake-up (a comma-separated list of principals), on one cluster-wide channel every node
// subscribes to once; a pipelined append for many recipients publishes one wake-up naming them all.
import type { Redis } from "ioredis";
import type { AppendItem, MailboxEngine, MailboxEntry, SeedEntry } from "../mailbox.ts";
import type { PubSub } from "../pubsub.ts";
import type { Keys } from "./keys.ts";
import type { ScriptCommands, ScriptedRedis } from "./scripts.ts";

export const WAKE_CHANNEL = "wake";

export interface RedisMailboxOptions {
  /** Most entries a mailbox holds before it spills to Postgres. */
  capacity?: number;
  /** A mailbox untouched this long expires (it is rebuilt from Postgres when needed). */
  idleTtlMs?: number;
}

type Pipeline = ReturnType<Redis["pipeline"]> & { [K in keyof ScriptCommands]: (...args: Parameters<ScriptCommands[K]>) => Pipeline };

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
    const channel = this.keys.channel(WAKE_CHANNEL);
    if (items.length === 1) {
      const it = items[0]!;
      const k = this.keys;
      await this.redis.mailboxAppend(k.mailbox(it.principal), k.mailboxIndex(it.principal), it.id, it.payload, this.capacity, this.ttl, channel, it.principal);
      return;
    }
    if (items.length === 0) return;
    // many mailboxes (a group send): one pipeline, and one wake-up naming every principal
    const p = this.redis.pipeline() as Pipeline;
    for (const it of items) {
      p.mailboxAppend(this.keys.mailbox(it.principal), this.keys.mailboxIndex(it.principal), it.id, it.payload, this.capacity, this.ttl, "", it.principal);
    }
    p.publish(channel, [...new Set(items.map((i) => i.principal))].join(","));
    const results = (await p.exec()) ?? [];
    for (const [err] of results) if (err) throw err;
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
