// The in-process registry of whoever waits on this node for a message in a stream (an inbox, a group): long polls, and
// MCP sessions waiting on their principal's streams (WebSockets take streams live through Channels instead). The node holds ONE
// subscription (the streams' message channel) whatever the number of waiters; a message that arrives wakes the
// waiters of its stream here. O(1) Redis connections. Per stream waited on it keeps the newest number this node knows
// of (a waiter's read, a message that arrived), which the position check (runtime/messaging/position-check.ts) holds
// against Postgres's.

import type { StreamId } from "./stream-id.ts";

/**
 * Called with the raw id of the message that arrived; null at shutdown, or when the position check found the stream
 * past what this node saw (the message is not known: read the stream).
 */
type Wake = (id: string | null) => void;

/** The waiters of one stream, and the newest number this node knows the stream to have (undefined: none yet). */
interface Waiting {
  wakes: Set<Wake>;
  seen: number | undefined;
}

export class WaiterRegistry {
  private readonly byStream = new Map<StreamId, Waiting>();
  private count = 0;

  /** Register a waiter on `stream`; returns the function that removes it (safe to call twice). */
  add(stream: StreamId, wake: Wake): () => void {
    let w = this.byStream.get(stream);
    if (w === undefined) {
      w = { wakes: new Set(), seen: undefined };
      this.byStream.set(stream, w);
    }
    w.wakes.add(wake);
    this.count++;
    let removed = false;
    return () => {
      if (removed) return;
      removed = true;
      this.count--;
      const at = this.byStream.get(stream);
      if (at === undefined) return;
      at.wakes.delete(wake);
      if (at.wakes.size === 0) this.byStream.delete(stream);
    };
  }

  /** Wake every waiter of a stream on this node (`seq`: the number of the message that arrived); how many there were. */
  wake(stream: StreamId, id: string | null, seq?: number): number {
    const w = this.byStream.get(stream);
    if (!w) return 0;
    if (seq !== undefined && (w.seen === undefined || seq > w.seen)) w.seen = seq;
    const woken = [...w.wakes];
    for (const fn of woken) fn(id);
    return woken.length;
  }

  /**
   * A waiter read `stream` from Postgres, and its newest number was `last` then: what this node knows of it from now
   * on (lower than a number seen meanwhile at worst, which costs one needless wake-up; never higher than the truth).
   */
  read(stream: StreamId, last: number): void {
    const w = this.byStream.get(stream);
    if (w !== undefined) w.seen = last;
  }

  /** The newest number this node knows `stream` to have, if it has waiters and knows one. */
  seen(stream: StreamId): number | undefined {
    return this.byStream.get(stream)?.seen;
  }

  /** `stream`'s newest number is `seq` (the position check's baseline, or what it woke the waiters for). */
  saw(stream: StreamId, seq: number): void {
    const w = this.byStream.get(stream);
    if (w !== undefined && (w.seen === undefined || seq > w.seen)) w.seen = seq;
  }

  /** The streams waited on now. */
  streams(): IterableIterator<StreamId> {
    return this.byStream.keys();
  }

  /** Whether anyone waits on `stream`. */
  has(stream: StreamId): boolean {
    return this.byStream.has(stream);
  }

  /** Wake everyone (shutdown). */
  wakeAll(): void {
    for (const w of [...this.byStream.values()]) for (const fn of [...w.wakes]) fn(null);
  }

  /** Waiters registered right now. */
  get size(): number {
    return this.count;
  }
}
