// The in-memory twin of the streams' store (runtime/messaging/core-stores.ts StreamStore): reads past cursors with
// their delivery counts, the marks of sockets taking streams live, joining and leaving, acks; on the tables beside
// this file, doing what runtime/messaging/stream-store.ts and acks-store.ts's ackBatch do in Postgres (the contract suite,
// test/stream-store.contract.ts, runs both).
import type { Mark, StreamStore } from "../../runtime/messaging/core-stores.ts";
import type { AckItem, AckOutcome } from "../../runtime/messaging/acks-store.ts";
import type { Backlog, Published, Read, StreamEntry } from "../../runtime/messaging/stream-store.ts";
import {
  groupOf,
  groupStream,
  inboxStream,
  INBOX_THREAD,
  type StreamId,
  threadOf,
} from "../../runtime/messaging/stream-id.ts";
import { type Cursor, LIVE, type StreamTables } from "./stream-tables.ts";

export class MemoryStreamStore implements StreamStore {
  constructor(private readonly tables: StreamTables) {}

  async streamsOf(members: string[]): Promise<Map<string, StreamId[]>> {
    this.tables.check();
    const out = new Map<string, StreamId[]>();
    for (const m of members) {
      const groups = this.tables
        .cursors(m)
        .map(([s]) => s)
        .filter((s) => threadOf(s) !== INBOX_THREAD);
      out.set(m, [inboxStream(m), ...groups]);
    }
    return out;
  }

  /**
   * As the one statement does: every read sees the state before any of them (delivery counts, cursors), then the
   * hand-outs are recorded together, and a cursor's expired count goes to the first read of it.
   */
  async backlog(reads: Read[], horizon: bigint): Promise<Backlog[]> {
    this.tables.check();
    const out: Backlog[] = [];
    /** Per cursor: the highest number handed out, whether its expired count was handed, the counts to raise. */
    const handed = new Map<Cursor, { top: number; took: boolean; raise: Map<number, number> }>();
    for (const read of reads) {
      const b: Backlog = { entries: [], last: new Map(), cursors: new Map() };
      out.push(b);
      const mine = this.tables.cursors(read.member).filter(([s]) => read.stream === null || s === read.stream);
      const cursors: [StreamId, Cursor | undefined][] = mine;
      const inbox = inboxStream(read.member);
      if ((read.stream === null || read.stream === inbox) && !mine.some(([s]) => s === inbox))
        cursors.unshift([inbox, undefined]);
      for (const [stream, c] of cursors) {
        const state = c === undefined ? undefined : (handed.get(c) ?? { top: 0, took: false, raise: new Map() });
        if (c !== undefined && state !== undefined) handed.set(c, state);
        const acked = c?.acked ?? 0;
        const expired = c !== undefined && state !== undefined && !state.took ? c.expired : 0;
        if (state !== undefined && c!.expired > 0) state.took = true;
        b.last.set(stream, this.tables.last(stream));
        b.cursors.set(stream, { acked, above: [...(c?.above ?? [])].sort((x, y) => x - y), expired });
        const from = Math.max(acked, read.after);
        let n = 0;
        for (const m of this.tables.after(stream, from)) {
          if (n >= read.limit) break;
          if (m.row.id < horizon || c?.above.has(m.seq)) continue;
          n++;
          const was = c?.delivered ?? 0;
          const had = c?.counts.get(m.seq);
          const entry: StreamEntry = {
            stream,
            seq: m.seq,
            id: String(m.row.id),
            payload: this.tables.payload(m, horizon),
            deliveryCount: m.seq <= was ? (had ?? 1) + 1 : 1,
          };
          b.entries.push(entry);
          if (state === undefined) continue;
          state.top = Math.max(state.top, m.seq);
          if (m.seq <= was) state.raise.set(m.seq, Math.max(state.raise.get(m.seq) ?? 0, (had ?? 1) + 1));
        }
      }
    }
    for (const [c, h] of handed) {
      c.delivered = Math.max(c.delivered, h.top);
      if (h.took) c.expired = 0;
      for (const [seq, count] of h.raise) c.counts.set(seq, Math.max(c.counts.get(seq) ?? 0, count));
      for (const seq of c.counts.keys()) if (seq <= c.acked) c.counts.delete(seq);
    }
    return out;
  }

  async after(stream: StreamId, after: number, limit: number, horizon: bigint): Promise<Published[]> {
    this.tables.check();
    return this.tables
      .after(stream, after)
      .filter((m) => m.row.id >= horizon)
      .slice(0, limit)
      .map((m) => this.tables.published(m, horizon));
  }

  async heads(streams: StreamId[]): Promise<Map<StreamId, number>> {
    this.tables.check();
    const out = new Map<StreamId, number>();
    for (const s of streams) {
      const last = this.tables.head(s);
      if (last !== undefined) out.set(s, last);
    }
    return out;
  }

  async mark(marks: Mark[]): Promise<void> {
    this.tables.check();
    for (const { member, stream, seq } of marks) {
      const c = this.tables.cursor(member, stream);
      if (c === undefined) {
        // an inbox never written to gets its cursor, taken live
        if (seq === null && threadOf(stream) === INBOX_THREAD) this.tables.setCursor(member, stream, 0, LIVE);
        continue;
      }
      c.delivered = seq === null ? LIVE : c.delivered === LIVE ? Math.max(seq, c.acked) : Math.max(c.delivered, seq);
    }
  }

  async join(group: bigint, members: string[]): Promise<{ member: string; acked: number }[]> {
    this.tables.check();
    return this.tables.join(group, members);
  }

  async leave(group: bigint, member: string): Promise<boolean> {
    this.tables.check();
    const gone = this.tables.groups.get(group)?.delete(member) ?? false;
    this.tables.dropCursor(member, groupStream(group));
    return gone;
  }

  /** Each item as flock_stream_ack takes it, in order (a sender's own group message takes nothing before it). */
  async ack(items: AckItem[]): Promise<AckOutcome[]> {
    this.tables.check();
    return items.map((it) => {
      const m = this.tables.messages.get(String(it.id));
      if (m === undefined || (m.row.recipient !== null && m.row.recipient !== it.recipient)) return false;
      const through = it.through === true && m.row.sender !== it.recipient;
      const acked = this.tables.streamAck(it.recipient, m.stream, m.seq, through);
      if (acked < 0) return false;
      return { thread: groupOf(m.stream) ?? INBOX_THREAD, seq: m.seq, acked };
    });
  }
}
