// In-process mailboxes with the same rules as the Redis scripts: only unacknowledged entries are held, a
// mailbox starts unseeded (so a restarted node rebuilds it from Postgres), and it spills to Postgres
// beyond `capacity`.
import { APPEND_PART, type AppendItem, type MailboxEngine, type MailboxEntry, type SeedEntry } from "../mailbox.ts";
import type { PubSub } from "../pubsub.ts";
import { appendWake, clearWake, readWake } from "../wake.ts";

const WAKE_CHANNEL = "wake";

interface Entry {
  seq: number;
  payload: string;
  count: number;
}

interface Box {
  state: "complete" | "partial" | null;
  /** Raw message id -> entry, in stream order (insertion order of the Map). */
  entries: Map<string, Entry>;
  /** The seq of the last entry added (it may be gone since). */
  last: number;
  /** The seq of the last entry handed out by an append (0: none), for a chained hand-out (`AppendItem.afterHanded`). */
  handed: number;
}

/** A message's thread, read from its payload as the Redis script does (the payload's first "thread_id"). */
const threadOf = (payload: string): string | undefined => /"thread_id":"([^"]*)"/.exec(payload)?.[1];

const byRawId = (a: string, b: string) => (a.length !== b.length ? a.length - b.length : a < b ? -1 : a > b ? 1 : 0);

export class MemoryMailboxes implements MailboxEngine {
  readonly appendPart = APPEND_PART;
  private readonly boxes = new Map<string, Box>();
  /** Ack tombstones per principal: raw id -> ack time, oldest first (see MailboxEngine.ackMemoryMs). */
  private readonly acked = new Map<string, Map<string, number>>();
  /** Principals by their last ack, oldest first: one with none for ackMemoryMs loses its tombstones. */
  private readonly lastAck = new Map<string, number>();
  private seq = 0;

  constructor(
    private readonly pubsub: PubSub,
    readonly capacity = 10_000,
    readonly ackMemoryMs = 60_000,
    private readonly now: () => number = Date.now,
  ) {}

  private isAcked(principal: string, id: string): boolean {
    const t = this.acked.get(principal)?.get(id);
    return t !== undefined && t > this.now() - this.ackMemoryMs;
  }

  private get refill(): number {
    return Math.max(1, Math.floor(this.capacity / 2));
  }

  private box(principal: string): Box {
    let b = this.boxes.get(principal);
    if (!b) {
      b = { state: null, entries: new Map(), last: 0, handed: 0 };
      this.boxes.set(principal, b);
    }
    return b;
  }

  async append(items: AppendItem[]): Promise<(string | null)[]> {
    const handed: (string | null)[] = [];
    for (const it of items) {
      let out: string | null = null;
      if (it.ensure && !this.boxes.get(it.principal)?.state) {
        handed.push(out);
        continue;
      }
      const b = this.box(it.principal);
      if (b.state !== "partial" && !b.entries.has(it.id) && !this.isAcked(it.principal, it.id)) {
        if (b.entries.size >= this.capacity) {
          if (b.state) b.state = "partial";
        } else {
          const after = this.handOutAfter(b, it);
          const caughtUp = after !== null && b.state === "complete" && !this.holdsAfter(b, after);
          b.last = ++this.seq;
          b.entries.set(it.id, { seq: b.last, payload: it.payload, count: caughtUp ? 1 : 0 });
          if (caughtUp) out = String((b.handed = b.last));
        }
      }
      handed.push(out);
    }
    if (items.length > 0) await this.pubsub.publish(WAKE_CHANNEL, appendWake(items));
    return handed;
  }

  /** The seq a new entry may be handed out after (AppendItem.after, or the chain of afterHanded), else null. */
  private handOutAfter(b: Box, it: AppendItem): number | null {
    if (it.afterHanded !== undefined) {
      const prev = b.entries.get(it.afterHanded);
      return prev !== undefined && prev.seq === b.handed ? prev.seq : null;
    }
    return it.after === undefined ? null : Number(it.after);
  }

  /** Whether the mailbox holds an entry after `seq` (the last one added is usually at or before it). */
  private holdsAfter(b: Box, seq: number): boolean {
    if (b.last <= seq) return false;
    for (const e of b.entries.values()) if (e.seq > seq) return true;
    return false;
  }

  async fetch(principal: string, limit: number, cursor: string | null): Promise<MailboxEntry[] | null> {
    const b = this.boxes.get(principal);
    if (!b?.state) return null;
    if (b.state === "partial" && b.entries.size < this.refill) return null;
    const after = cursor === null ? 0 : Number(cursor);
    const out: MailboxEntry[] = [];
    for (const [id, e] of b.entries) {
      if (e.seq <= after) continue;
      if (out.length >= limit) break;
      e.count += 1;
      out.push({ id, payload: e.payload, deliveryCount: e.count, cursor: String(e.seq) });
    }
    return out;
  }

  async seed(principal: string, entries: SeedEntry[], complete: boolean): Promise<void> {
    const b = this.box(principal);
    if (b.state && (b.state !== "partial" || b.entries.size >= this.refill)) return;
    // a mailbox never built or lost: a row it does not hold counts as delivered at least once (mailboxSeed-5.lua)
    const floor = b.state === null ? 1 : 0;
    const merged = new Map<string, { payload: string; count: number }>();
    for (const e of entries) {
      if (this.isAcked(principal, e.id)) continue;
      merged.set(e.id, { payload: e.payload, count: b.entries.has(e.id) ? e.deliveryCount : Math.max(e.deliveryCount, floor) });
    }
    for (const [id, e] of b.entries) {
      const cur = merged.get(id);
      if (cur) cur.count = Math.max(cur.count, e.count);
      else if (!this.isAcked(principal, id)) merged.set(id, { payload: e.payload, count: e.count });
    }
    const ids = [...merged.keys()].sort(byRawId);
    b.entries = new Map();
    for (const id of ids.slice(0, this.capacity)) {
      const m = merged.get(id)!;
      b.entries.set(id, { seq: ++this.seq, payload: m.payload, count: m.count });
      b.last = this.seq;
    }
    b.state = complete && ids.length <= this.capacity ? "complete" : "partial";
  }

  async ack(principal: string, id: string): Promise<boolean> {
    const now = this.now();
    let tombs = this.acked.get(principal);
    if (!tombs) {
      tombs = new Map();
      this.acked.set(principal, tombs);
    }
    tombs.delete(id);
    tombs.set(id, now);
    for (const [old, at] of tombs) {
      if (at > now - this.ackMemoryMs) break;
      tombs.delete(old);
    }
    this.lastAck.delete(principal);
    this.lastAck.set(principal, now);
    for (const [p, at] of this.lastAck) {
      if (at > now - this.ackMemoryMs) break;
      this.lastAck.delete(p);
      this.acked.delete(p);
    }
    return this.boxes.get(principal)?.entries.delete(id) ?? false;
  }

  async handedBefore(principal: string, id: string): Promise<string[]> {
    const b = this.boxes.get(principal);
    const own = b?.entries.get(id);
    if (!b || !own) return [];
    const thread = threadOf(own.payload);
    if (thread === undefined) return [];
    const out: string[] = [];
    for (const [mid, e] of b.entries) {
      if (e.seq >= own.seq) continue;
      if (e.count >= 1 && threadOf(e.payload) === thread) out.push(mid);
    }
    return out;
  }

  async clear(principal: string): Promise<void> {
    this.boxes.delete(principal);
    await this.pubsub.publish(WAKE_CHANNEL, clearWake(principal));
  }

  onWake(handler: (principal: string, id: string | null) => void): Promise<() => Promise<void>> {
    return this.pubsub.subscribe(WAKE_CHANNEL, (buf) => readWake(buf.toString(), handler));
  }
}
