// Reading the streams (docs/ARCHITECTURE.md, "Messages"): past a member's cursors (long polls and socket catch-ups,
// those starting together read in one statement), and a stream's messages after a number (to fill a gap a node saw:
// from the stream's shared log as far as it holds them without a hole, else from the store). While Postgres is out of
// reach a long poll reads the streams' logs past the cursors the engines remember: each ack's cursor is sent there as
// the ack is answered, not waited for (CursorCopies), so a poll reads the logs only once Postgres's circuit has been
// open for LOGS_AFTER_MS (the copies sent before the outage have landed: a poll earlier waits out the rest) and none
// of its member's is under way or held on this node.
import { Batcher } from "../batcher.ts";
import { outageOf, unavailable } from "../circuit.ts";
import { COMMAND_TIMEOUT_MS } from "../engines/engines.ts";
import { contiguous } from "../engines/stream-log.ts";
import type { Core } from "../services.ts";
import type { StreamStore } from "./core-stores.ts";
import type { HandOuts } from "./handouts.ts";
import type { Backlog, PollRead, Published, Read, StreamEntry } from "./stream-store.ts";
import { isGroupStream, type StreamId, threadOf } from "./stream-id.ts";
import { CursorCopies } from "./cursor-copies.ts";
import type { WaiterRegistry } from "./waiters.ts";

/** "<member> <stream>" cursors put into the remembered cursors kept at most (past it, put again). */
const KEPT_MAX = 100_000;
/**
 * A long poll reads the streams' logs only once Postgres's circuit has been open this long: every cursor copy an
 * answered ack sent before the outage has landed or failed by then (it left as the ack was answered, and an engine
 * call answers within COMMAND_TIMEOUT_MS), with half a second to spare.
 */
export const LOGS_AFTER_MS = COMMAND_TIMEOUT_MS + 500;
export class StreamReads {
  /** Reads past cursors (long polls, catch-ups): those asking while one statement runs go in the next, together. */
  private readonly reads: Batcher<Read, Backlog>;
  /** "<member> <stream>" whose cursor this node has put into the remembered cursors (StreamCursorCache). */
  private readonly cursorsKept = new Set<string>();
  /** The acks' cursors, written behind into the remembered cursors. */
  readonly copies: CursorCopies;

  constructor(
    private readonly svc: Pick<Core, "engines" | "horizons" | "circuits" | "metrics" | "log">,
    private readonly store: StreamStore,
    private readonly handOuts: HandOuts,
    /** The long polls' waiters, told each stream's newest number a poll's read saw (the position check's). */
    private readonly waiters?: WaiterRegistry,
  ) {
    this.reads = new Batcher((items) => store.backlog(items, svc.horizons.messages()), 2, 256);
    this.copies = new CursorCopies(svc);
  }

  /** Read past `member`'s cursor in one stream, or in all its streams (null); see stream-store.ts backlog. */
  backlog(member: string, stream: StreamId | null, limit: number, after = 0): Promise<Backlog> {
    return this.reads.push({ member, stream, limit, after });
  }

  /**
   * A stream's messages numbered above `after`, at most `limit`: from its log as far as the log holds them without a
   * hole from `after` on, else from Postgres (a log trimmed past `after`, expired, flushed or out of reach, or an
   * append that never ran: the sender died between commit and append).
   */
  async readAfter(key: StreamId, after: number, limit: number): Promise<Published[]> {
    const logged = await this.svc.engines.streams.after(key, after).catch(() => []);
    // a log renewed by each append may hold messages past retention's horizon: those are gone (a hole: Postgres)
    const run = contiguous(this.kept(logged), after);
    if (run.length > 0) return run.slice(0, limit);
    return this.store.after(key, after, limit, this.svc.horizons.messages());
  }

  /** Of a log's entries, those retention keeps (all, when it is unlimited). */
  private kept(logged: Published[]): Published[] {
    const horizon = this.svc.horizons.messages();
    return horizon === 0n ? logged : logged.filter((m) => BigInt(m.id) >= horizon);
  }

  /**
   * A long poll's read of `member`'s streams, at most `limit` in all: past their cursors in Postgres, merged oldest
   * first (each stream's part contiguous from its cursor), recorded as handed out by the read itself; while
   * Postgres is out of reach, from the streams' logs past the cursors the engine remembers (once its circuit has been
   * open LOGS_AFTER_MS, waiting out the rest, and with none of the member's cursor copies under way or held here:
   * CursorCopies), contiguous from each cursor, or a 503 when that cannot be had for every stream.
   * Those count as possibly delivered before (2): this node cannot know. `expired`: how many of the member's
   * unacknowledged messages went past retention since a read last said so (the read takes the count from the
   * cursors, so each is reported once; 0 from the logs, which cannot say).
   */
  async readForPoll(member: string, streams: StreamId[], limit: number): Promise<PollRead> {
    const pg = this.svc.circuits.postgres;
    if (!pg.isOpen) {
      try {
        const b = await this.backlog(member, null, limit);
        this.keepCursors(member, b);
        if (this.waiters !== undefined) for (const [stream, last] of b.last) this.waiters.read(stream, last);
        let expired = 0;
        for (const c of b.cursors.values()) expired += c.expired;
        const out = merged(b.entries, limit);
        this.handOuts.countAway(member, out);
        return { entries: out, expired };
      } catch (err) {
        if (outageOf(err) !== "postgres") throw err;
        pg.open(err);
      }
    }
    // an ack answered just before the outage may have its cursor copy still on its way: the logs are read once the
    // circuit has been open LOGS_AFTER_MS (a poll waits out the rest), and never past a copy of the member held here
    const early = LOGS_AFTER_MS - pg.openMs;
    if (early > 0) await new Promise((resolve) => setTimeout(resolve, early));
    if (!pg.isOpen || this.copies.pending(member)) throw unavailable("postgres");
    return { entries: await this.fromLogs(member, streams, limit), expired: 0 };
  }

  /** The cursors a read saw go into the remembered cursors once per node, unless one is there (an ack's is newer). */
  private keepCursors(member: string, b: Backlog): void {
    for (const [stream, c] of b.cursors) {
      const key = `${member} ${stream}`;
      if (this.cursorsKept.has(key)) continue;
      if (this.cursorsKept.size >= KEPT_MAX) this.cursorsKept.clear();
      this.cursorsKept.add(key);
      this.svc.engines.streamCursors
        .merge([{ member, thread: threadOf(stream), acked: c.acked, above: c.above, ifAbsent: true }])
        .catch(() => this.cursorsKept.delete(key));
    }
  }

  private async fromLogs(member: string, streams: StreamId[], limit: number): Promise<StreamEntry[]> {
    const cursors = await this.svc.engines.streamCursors.read(member, streams.map(threadOf));
    const cursorOf = (stream: StreamId) => cursors.get(threadOf(stream));
    const logs = await Promise.all(
      streams.map((stream) => this.svc.engines.streams.after(stream, cursorOf(stream)?.acked ?? 0)),
    );
    const own = `"from":{"id":${JSON.stringify(member)},`;
    const out: StreamEntry[] = [];
    streams.forEach((stream, i) => {
      const c = cursorOf(stream);
      const logged = this.kept(logs[i]!);
      const group = isGroupStream(stream);
      // an inbox never written to has no cursor yet: nothing to hand out
      if (c === undefined && (group || logged.length > 0)) throw unavailable("postgres");
      if (c === undefined) return;
      // what follows the cursor must be had from its first number on: a hole would let a cumulative ack take it
      if (logged.length > 0 && logged[0]!.seq > c.acked + 1) throw unavailable("postgres");
      const above = new Set(c.above);
      for (const m of contiguous(logged, c.acked)) {
        if (above.has(m.seq) || (group && m.payload.includes(own))) continue; // acknowledged already, or the member's own
        if (out.length >= limit) break;
        out.push({ stream, seq: m.seq, id: m.id, payload: m.payload, deliveryCount: 2 });
        this.handOuts.handedAway(member, stream, m.seq);
      }
    });
    this.handOuts.trim();
    return out;
  }

  /** Resolves once the reads taken are done, and the cursor copies under way have landed or been given up. */
  async drain(): Promise<void> {
    await this.reads.drain();
    await this.copies.close();
  }
}

/**
 * A read's entries (each stream's in its own order, contiguous from its cursor), merged oldest first by id, at most
 * `limit`: a merge of ordered runs (within a stream number order can differ from id order), so the cut at `limit`
 * drops only the ends of runs, and what a poll gets of a stream is still contiguous from the cursor.
 */
export function merged(entries: StreamEntry[], limit: number): StreamEntry[] {
  const runs: StreamEntry[][] = [];
  let run: StreamEntry[] = [];
  let stream: StreamId | undefined;
  for (const e of entries) {
    if (e.stream !== stream || run.length === 0) {
      run = [];
      runs.push(run);
      stream = e.stream;
    }
    run.push(e);
  }
  if (runs.length <= 1) return entries.slice(0, limit);
  const at = runs.map(() => 0);
  const older = (a: string, b: string) => a.length < b.length || (a.length === b.length && a < b);
  const out: StreamEntry[] = [];
  while (out.length < limit) {
    let pick = -1;
    for (let r = 0; r < runs.length; r++) {
      const head = runs[r]![at[r]!];
      if (head !== undefined && (pick < 0 || older(head.id, runs[pick]![at[pick]!]!.id))) pick = r;
    }
    if (pick < 0) break;
    out.push(runs[pick]![at[pick]!++]!);
  }
  return out;
}
