// Redis mailboxes: one stream per principal holding only unacknowledged messages (an ack deletes the entry),
// bounded by `capacity`, plus an index hash (seed state, entry ids, delivery counts). Every operation is one
// script, so one round trip; an append for many recipients (a part of a group send, up to appendPart) too, and
// fetches or acks that arrive while one is running go together in the next call (Batcher). The append script also
// publishes the wake-up (runtime/engines/wake.ts: the recipients and the message), on one channel every node
// subscribes to once: one wake-up naming every recipient of the call. On a Redis Cluster, where a script's keys must
// share a slot, a call over many principals is split into one per slot (runtime/engines/redis/slots.ts), and the
// wake-ups go on WAKE_SHARDS sharded channels (a principal's by its slot), published once the appends are in.
import { Batcher } from "../../batcher.ts";
import { APPEND_PART, type AppendItem, type MailboxEngine, type MailboxEntry, type SeedEntry } from "../mailbox.ts";
import { appendWake, clearWake, readWake } from "../wake.ts";
import type { AckTurn, Keys } from "./keys.ts";
import type { RedisPubSub } from "./pubsub.ts";
import type { ScriptedRedis } from "./scripts.ts";
import { perSlot, slotOf } from "./slots.ts";

export const WAKE_CHANNEL = "wake";
/** Sharded wake channels on a cluster: every node subscribes to all of them (one connection per master). */
export const WAKE_SHARDS = 16;

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
  /** On a Redis Cluster: split calls per slot, wake-ups on sharded channels. */
  clustered?: boolean;
}

interface FetchRequest {
  principal: string;
  limit: number;
  cursor: string;
}

/**
 * Where an ack made at `now` keeps its tombstone: time is cut into slots as long as the ack memory, a principal's
 * three tombstone sets take turns by slot (its number mod 3), and a set expires at the end of the slot after its
 * own. Every expiry is set relative to the ack that sets it, more than one slot after it: a tombstone lasts at least
 * `memoryMs` whatever the clocks of nodes and Redis say. A set's turn comes round again a whole slot after it expired,
 * so clock skew or latency (up to a slot) never lets a set's expiry be pushed on into its next turn: no set carries
 * ids over, and none needs trimming (mailboxAck-n.lua). With two sets taking turns there was no such margin: a node a
 * little ahead writing the set again before it expired kept it, and its ids, for another two slots, and so on.
 */
export function ackSlot(now: number, memoryMs: number): { turn: AckTurn; expireMs: number } {
  const slot = Math.floor(now / memoryMs);
  return { turn: (slot % 3) as AckTurn, expireMs: Math.ceil((slot + 2) * memoryMs - now) };
}

/** Most mailboxes one fetch or ack script call covers. */
const MAX_BATCH = 1000;

export class RedisMailboxes implements MailboxEngine {
  readonly capacity: number;
  readonly appendPart: number;
  readonly ackMemoryMs: number;
  private readonly ttl: number;
  private readonly now: () => number;
  private readonly clustered: boolean;
  private readonly fetches = new Batcher<FetchRequest, MailboxEntry[] | null>((reqs) => this.fetchMany(reqs), 1, MAX_BATCH);
  private readonly acks = new Batcher<{ principal: string; id: string }, boolean>((acks) => this.ackMany(acks), 1, MAX_BATCH);

  constructor(
    private readonly redis: ScriptedRedis,
    private readonly keys: Keys,
    private readonly pubsub: RedisPubSub,
    opts: RedisMailboxOptions = {},
  ) {
    this.clustered = opts.clustered ?? false;
    this.appendPart = this.clustered ? Number.POSITIVE_INFINITY : APPEND_PART;
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
    if (!this.clustered) return this.appendCall(items, true);
    const handed = await perSlot(true, items, (it) => this.keys.mailbox(it.principal), (group) => this.appendCall(group, false));
    await this.wakeSharded(items, appendWake);
    return handed;
  }

  /** One script call whatever the number of recipients; a payload shared by many (a group send) goes once. */
  private async appendCall(items: AppendItem[], wakeHere: boolean): Promise<(string | null)[]> {
    const keys: string[] = [];
    const payloads: string[] = [];
    const refs = new Map<string, number>();
    const perItem: (string | number)[] = [];
    for (const it of items) {
      keys.push(this.keys.mailbox(it.principal), this.keys.mailboxIndex(it.principal), ...this.keys.mailboxAckedAll(it.principal));
      let ref = refs.get(it.payload);
      if (ref === undefined) {
        ref = payloads.push(it.payload);
        refs.set(it.payload, ref);
      }
      perItem.push(it.id, ref, it.afterHanded !== undefined ? `m${it.afterHanded}` : (it.after ?? ""));
    }
    const wake = wakeHere ? appendWake(items) : "";
    const channel = wakeHere ? this.keys.channel(WAKE_CHANNEL) : "";
    const ensure = items[0]!.ensure ? "1" : "";
    const handed = await this.redis.mailboxAppend(keys.length, ...keys, this.capacity, this.ttl, channel, wake, ensure, payloads.length, ...payloads, ...perItem);
    return handed.map((h) => (h === 0 ? null : String(h)));
  }

  /** The shard of the wake channel that carries a principal's wake-ups. */
  private wakeShard(principal: string): string {
    return this.keys.shardChannel(WAKE_CHANNEL, slotOf(principal) % WAKE_SHARDS);
  }

  /** Publish wake-ups on the sharded channels, one publish per shard reached. */
  private async wakeSharded<T extends { principal: string }>(items: readonly T[], text: (items: T[]) => string): Promise<void> {
    const byShard = new Map<string, T[]>();
    for (const it of items) {
      const ch = this.wakeShard(it.principal);
      const list = byShard.get(ch);
      if (list) list.push(it);
      else byShard.set(ch, [it]);
    }
    await Promise.all([...byShard].map(([ch, list]) => this.pubsub.spublish(ch, text(list))));
  }

  fetch(principal: string, limit: number, cursor: string | null): Promise<MailboxEntry[] | null> {
    return this.fetches.push({ principal, limit, cursor: cursor ?? "" });
  }

  /** Fetches that arrive while one runs go together in the next script call (a group send wakes every member). */
  private fetchMany(reqs: FetchRequest[]): Promise<(MailboxEntry[] | null)[]> {
    return perSlot(this.clustered, reqs, (q) => this.keys.mailbox(q.principal), (group) => this.fetchCall(group));
  }

  private async fetchCall(reqs: FetchRequest[]): Promise<(MailboxEntry[] | null)[]> {
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
    await this.redis.mailboxSeed(k.mailbox(principal), k.mailboxIndex(principal), ...k.mailboxAckedAll(principal), complete ? "1" : "p", this.capacity, this.ttl, this.refill, ...rows);
  }

  ack(principal: string, id: string): Promise<boolean> {
    return this.acks.push({ principal, id });
  }

  private ackMany(acks: { principal: string; id: string }[]): Promise<boolean[]> {
    return perSlot(this.clustered, acks, (a) => this.keys.mailbox(a.principal), (group) => this.ackCall(group));
  }

  private async ackCall(acks: { principal: string; id: string }[]): Promise<boolean[]> {
    const k = this.keys;
    const { turn, expireMs } = ackSlot(this.now(), this.ackMemoryMs);
    const keys = acks.flatMap((a) => [k.mailbox(a.principal), k.mailboxIndex(a.principal), k.mailboxAcked(a.principal, turn)]);
    const found = await this.redis.mailboxAck(keys.length, ...keys, expireMs, ...acks.map((a) => a.id));
    return found.map((n) => n === 1);
  }

  async handedBefore(principal: string, id: string): Promise<string[]> {
    return this.redis.mailboxHandedBefore(this.keys.mailbox(principal), this.keys.mailboxIndex(principal), id);
  }

  async clear(principal: string): Promise<void> {
    if (this.clustered) {
      await this.redis.del(this.keys.mailbox(principal), this.keys.mailboxIndex(principal));
      await this.wakeSharded([{ principal }], () => clearWake(principal));
      return;
    }
    await this.redis
      .multi()
      .del(this.keys.mailbox(principal), this.keys.mailboxIndex(principal))
      .publish(this.keys.channel(WAKE_CHANNEL), clearWake(principal))
      .exec();
  }

  async onWake(handler: (principal: string, id: string | null) => void): Promise<() => Promise<void>> {
    const read = (buf: Buffer) => readWake(buf.toString(), handler);
    if (!this.clustered) return this.pubsub.subscribe(WAKE_CHANNEL, read);
    const stops = await Promise.all(
      Array.from({ length: WAKE_SHARDS }, (_, n) => this.pubsub.ssubscribe(this.keys.shardChannel(WAKE_CHANNEL, n), read)),
    );
    return async () => {
      await Promise.all(stops.map((stop) => stop()));
    };
  }
}
