// What was handed out, recorded so that the next delivery of it counts one more (docs/ARCHITECTURE.md, "Messages"): the
// marks of sockets taking a stream live or stopping (in the store, those arriving while one statement runs going in the
// next), and the numbers long polls got from the streams' logs while Postgres was away (kept on this node until a read
// of Postgres counts them). A read past cursors records its own hand-outs (stream-store.ts backlog).
import { Batcher } from "../batcher.ts";
import type { Mark, StreamStore } from "./core-stores.ts";
import type { StreamEntry } from "./stream-store.ts";
import type { StreamId } from "./stream-id.ts";

/** "<member> <stream>" hand-outs kept at most (past it they are forgotten: a count may then say 1 where 2 was right). */
const AWAY_MAX = 100_000;

export class HandOuts {
  /** The marks of sockets (core-stores.ts StreamStore.mark), batched. */
  private readonly marks: Batcher<Mark, undefined>;
  /** "<member> <stream>" -> the last number a poll got while Postgres was away (not yet in delivered_seq). */
  private readonly away = new Map<string, number>();

  constructor(store: StreamStore) {
    this.marks = new Batcher(
      async (items) => {
        await store.mark(items);
        return items.map(() => undefined);
      },
      1,
      1000,
    );
  }

  /** A socket starts (`seq` null) or stops (the last number published to it) taking a stream live. */
  mark(member: string, stream: StreamId, seq: number | null): Promise<void> {
    return this.marks.push({ member, stream, seq }).then(() => undefined);
  }

  /** A long poll got `member`'s message `seq` of `stream` from the stream's log, with Postgres out of reach. */
  handedAway(member: string, stream: StreamId, seq: number): void {
    const key = `${member} ${stream}`;
    this.away.set(key, Math.max(this.away.get(key) ?? 0, seq));
  }

  /** Hand-outs kept past AWAY_MAX are forgotten (called once a poll's hand-outs are in). */
  trim(): void {
    if (this.away.size > AWAY_MAX) this.away.clear();
  }

  /** Of `member`'s entries just read from Postgres, those a poll got from a log meanwhile count as delivered before. */
  countAway(member: string, entries: StreamEntry[]): void {
    for (const e of entries) {
      const away = this.away.get(`${member} ${e.stream}`);
      if (away !== undefined && e.seq <= away && e.deliveryCount < 2) e.deliveryCount = 2;
    }
  }

  /** Resolves once the marks taken are written. */
  drain(): Promise<void> {
    return this.marks.drain();
  }
}
