// The in-memory twin of the sends' store (runtime/messaging/core-stores.ts SendStore): each message numbered in its
// stream as it is stored (gap-free, in the order of the batch), an id already taken refused before it takes a number,
// the sender's own group message acknowledged as it is stored, and direct threads made on first use as
// runtime/messaging/direct-threads-store.ts makes them. The files a message carries are recorded with it, not shared (that is the
// files' store).
import type { SendStore } from "../../runtime/messaging/core-stores.ts";
import { pairKey } from "../../runtime/messaging/direct-threads-store.ts";
import { type DirectMessage, IdClash, type NewMessage } from "../../runtime/messaging/messages-store.ts";
import { groupStream, inboxStream } from "../../runtime/messaging/stream-id.ts";
import type { StreamTables } from "./stream-tables.ts";

export class MemorySendStore implements SendStore {
  constructor(private readonly tables: StreamTables) {}

  async storeDirect(items: DirectMessage[]): Promise<(number | null | Error)[]> {
    this.tables.check();
    return items.map((m) => {
      // (a thread that does not exist is a foreign key refused: the message is not stored)
      if (!this.tables.principals.has(m.recipient) || !this.tables.threads.has(m.threadId)) return null;
      if (this.tables.messages.has(String(m.id))) return new IdClash(`message id ${m.id} taken`);
      const stream = inboxStream(m.recipient);
      const seq = this.tables.take(stream);
      this.tables.put(stream, seq, m);
      return seq;
    });
  }

  async storeGroup(items: NewMessage[]): Promise<(number | null | Error)[]> {
    this.tables.check();
    return items.map((m) => {
      if (!this.tables.groups.get(m.threadId)?.has(m.sender)) return null;
      if (this.tables.messages.has(String(m.id))) return new IdClash(`message id ${m.id} taken`);
      const stream = groupStream(m.threadId);
      const seq = this.tables.take(stream);
      this.tables.put(stream, seq, { ...m, recipient: null });
      this.tables.streamAck(m.sender, stream, seq, false);
      return seq;
    });
  }

  async committed(ids: bigint[]): Promise<Map<string, number>> {
    this.tables.check();
    const out = new Map<string, number>();
    for (const id of ids) {
      const m = this.tables.messages.get(String(id));
      if (m !== undefined) out.set(String(id), m.seq);
    }
    return out;
  }

  /** An agent takes messages from anyone; a person from anyone or friends only, as it chose; a pair that talked, always. */
  async directThread(me: string, to: string, newId: bigint): Promise<bigint | null> {
    this.tables.check();
    const p = this.tables.principals.get(to);
    if (p === undefined) return null;
    const pair = pairKey(me, to);
    const existing = this.tables.pairs.get(pair);
    if (existing !== undefined) return existing;
    if (p.kind === "human" && p.acceptsFrom === "friends" && !this.tables.friendships.has(`${me} ${to}`)) return null;
    this.tables.pairs.set(pair, newId);
    this.tables.threads.set(newId, { kind: "direct", pair });
    return newId;
  }
}
