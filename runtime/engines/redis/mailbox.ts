// Redis mailboxes: one stream per principal holding only unacknowledged messages (an ack deletes the entry),
// bounded by `capacity`, plus an index hash (seed state, entry ids, delivery counts). Every operation is one
// script, so one round trip; an append for many recipients (a group send) too, and fetches or acks that arrive
// while one is running go together in the next call (Batcher). The append script also publishes the wake-up
// (runtime/engines/wake.ts: the recipients and the message), on one channel every node subscribes to once: one
// wake-up naming every recipient. Its keys span many hash tags, so it needs a single Redis (not a Cluster).
import { Batcher } from "../../batcher.ts";
import type { AppendItem, MailboxEngine, MailboxEntry, SeedEntry } from "../mailbox.ts";
import { appendWake, clearWake, readWake } from "../wake.ts";
import type { PubSub } from "../pubsub.ts";
import type { Keys } from "./keys.ts";
import type { ScriptedRedis } from "./scripts.ts";

export const WAKE_CHANNEL = "wake";

export interface RedisMailboxOptions {
  /** Most entries a mailbox holds before it spills to Postgres. */
  capacity?: number;
  /**
   * A mailbox expires this long after it was built from Postgres (one not built yet: after its last append);
   * it is rebuilt when next needed.
   */
  ttlMs?: number;
  /** How long acks are remembered (see MailboxEngine.ackMemoryMs). */
  ackMemoryMs?: number;
  /** The clock ack times are read from. */
  now?: () => number;
}

interface FetchRequest {
  principal: string;
  limit: number;
  cursor: string;
}

/** Most mailboxes one fetch or ack script call covers. */
const MAX_BATCH = 1000;

export class RedisMailboxes implements MailboxEngine {
  readonly capacity: number;
  readonly ackMemoryMs: number;
  private readonly ttl: number;
  private readonly now: () => number;
  private readonly fetches = new Batcher<FetchRequest, MailboxEntry[] | null>((reqs) => this.fetchMany(reqs), 1, MAX_BATCH);
  private readonly acks = new Batcher<{ principal: string; id: string }, boolean>((acks) => this.ackMany(acks), 1, MAX_BATCH);

  constructor(
    private readonly redis: ScriptedRedis,
    private readonly keys: Keys,
    private readonly pubsub: PubSub,
    opts: RedisMailboxOptions = {},
  ) {
    this.capacity = opts.capacity ?? 10_000;
    this.ttl = opts.ttlMs ?? 30 * 86_400_000;
    this.ackMemoryMs = opts.ackMemoryMs ?? 60_000;
    this.now = opts.now ?? Date.now;
  }

  private get refill(): number {
    return Math.max(1, Math.floor(this.capacity / 2));
  }

  async append(items: AppendItem[]): Promise<(string | null)[]> {
    if (items.length === 0) return [];
    // One script call whatever the number of recipients; a payload shared by many (a group send) goes once.
    const keys: string[] = [];
    const payloads: string[] = [];
    const refs = new Map<string, number>();
    const perItem: (string | number)[] = [];
    for (const it of items) {
      keys.push(this.keys.mailbox(it.principal), this.keys.mailboxIndex(it.principal), this.keys.mailboxAcked(it.principal));
      let ref = refs.get(it.payload);
      if (ref === undefined) {
        ref = payloads.push(it.payload);
        refs.set(it.payload, ref);
      }
      perItem.push(it.id, ref, it.after ?? "");
    }
    const wake = appendWake(items);
    const channel = this.keys.channel(WAKE_CHANNEL);
    const ensure = items[0]!.ensure ? "1" : "";
    const handed = await this.redis.mailboxAppend(keys.length, ...keys, this.capacity, this.ttl, channel, wake, ensure, payloads.length, ...payloads, ...perItem);
    return handed.map((h) => (h === 0 ? null : String(h)));
  }

  fetch(principal: string, limit: number, cursor: string | null): Promise<MailboxEntry[] | null> {
    return this.fetches.push({ principal, limit, cursor: cursor ?? "" });
  }

  /** Fetches that arrive while one runs go together in the next script call (a group send wakes every member). */
  private async fetchMany(reqs: FetchRequest[]): Promise<(MailboxEntry[] | null)[]> {
    const keys: string[] = [];
    const args: (string | number)[] = [];
    for (const q of reqs) {
      keys.push(this.keys.mailbox(q.principal), this.keys.mailboxIndex(q.principal));
      args.push(q.cursor, q.limit);
    }
    const replies = await this.redis.mailboxFetch(keys.length, ...keys, this.refill, ...args);
    return replies.map((r) => {
      if (typeof r === "number") return null;
      const out: MailboxEntry[] = [];
      for (let i = 0; i + 3 < r.length; i += 4) {
        out.push({ cursor: String(r[i]), id: String(r[i + 1]), payload: String(r[i + 2]), deliveryCount: Number(r[i + 3]) });
      }
      return out;
    });
  }

  async seed(principal: string, entries: SeedEntry[], complete: boolean): Promise<void> {
    const rows: (string | number)[] = [];
    for (const e of entries) rows.push(e.id, e.payload, e.deliveryCount);
    const k = this.keys;
    await this.redis.mailboxSeed(k.mailbox(principal), k.mailboxIndex(principal), k.mailboxAcked(principal), complete ? "1" : "p", this.capacity, this.ttl, this.refill, ...rows);
  }

  ack(principal: string, id: string): Promise<boolean> {
    return this.acks.push({ principal, id });
  }

  private async ackMany(acks: { principal: string; id: string }[]): Promise<boolean[]> {
    const k = this.keys;
    const keys = acks.flatMap((a) => [k.mailbox(a.principal), k.mailboxIndex(a.principal), k.mailboxAcked(a.principal)]);
    const found = await this.redis.mailboxAck(keys.length, ...keys, this.now(), this.ackMemoryMs, ...acks.map((a) => a.id));
    return found.map((n) => n === 1);
  }

  async handedBefore(principal: string, id: string): Promise<string[]> {
    return this.redis.mailboxHandedBefore(this.keys.mailbox(principal), this.keys.mailboxIndex(principal), id);
  }

  async clear(principal: string): Promise<void> {
    await this.redis
      .multi()
      .del(this.keys.mailbox(principal), this.keys.mailboxIndex(principal))
      .publish(this.keys.channel(WAKE_CHANNEL), clearWake(principal))
      .exec();
  }

  onWake(handler: (principal: string, id: string | null) => void): Promise<() => Promise<void>> {
    return this.pubsub.subscribe(WAKE_CHANNEL, (buf) => readWake(buf.toString(), handler));
  }
}
