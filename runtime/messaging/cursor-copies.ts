// The acks' cursor copies (docs/ARCHITECTURE.md, "Acking"): each ack batch's moved cursors go to the remembered cursors
// (runtime/engines/stream-cursors.ts, what a long poll reads while Postgres is away) behind the ack's answer, on the
// wire before it; one that fails is held and sent again until it takes. A long poll consults `pending` before it
// reads the logs (runtime/messaging/stream-reads.ts).
import { type CursorWrite, mergeCursor, type StreamCursorState } from "../engines/stream-cursors.ts";
import { timed } from "../metrics.ts";
import type { Core } from "../services.ts";

/** Members whose cursor copies a node holds after they failed, at most (the oldest go past it: logged). */
export const HELD_MAX = 10_000;
/** How often held cursor copies are sent again. */
export const RETRY_MS = 250;

/**
 * The acks' cursor copies in the remembered cursors (runtime/engines/stream-cursors.ts), written behind: sent at once,
 * as the ack is answered, never waited for. One that fails is held (per member and stream the newest, merged as the
 * engine merges: the larger number, the union above) and sent again every RETRY_MS until it takes. `pending` says
 * whether a member's copy is under way or held here: that member's polls must not read the logs meanwhile.
 */
export class CursorCopies {
  /** Member -> stream's thread -> the cursor to write (failed, to send again), oldest member first. */
  private readonly held = new Map<string, Map<bigint, StreamCursorState>>();
  /** Member -> copies under way. */
  private readonly flying = new Map<string, number>();
  private readonly sending = new Set<Promise<void>>();
  private timer: NodeJS.Timeout | undefined;
  private dropped = 0;
  private closed = false;

  constructor(private readonly svc: Pick<Core, "engines" | "metrics" | "circuits" | "log">) {}

  /**
   * Send these cursors now, not waited for; resolves after the event-loop turn, once they have left (the Redis
   * connection writes a turn's commands at its end: engines/redis/coalesce.ts), so an answer given after it follows
   * its copy onto the wire.
   */
  async write(writes: CursorWrite[]): Promise<void> {
    if (writes.length === 0) return;
    for (const w of writes) this.flying.set(w.member, (this.flying.get(w.member) ?? 0) + 1);
    const p = timed(this.svc.metrics.redis.cursorMerge, () => this.svc.engines.streamCursors.merge(writes)).then(
      () => this.landed(writes),
      () => {
        this.landed(writes);
        this.hold(writes);
      },
    );
    this.sending.add(p);
    void p.finally(() => this.sending.delete(p));
    await new Promise<void>((resolve) => setImmediate(resolve));
  }

  /** Whether a cursor copy of `member` is under way or held on this node. */
  pending(member: string): boolean {
    return this.flying.has(member) || this.held.has(member);
  }

  /** Members whose copies are held (the queue gauges, tests). */
  get heldMembers(): number {
    return this.held.size;
  }

  /** Send what is held again now (the timer does every RETRY_MS while something is held). */
  retry(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
    if (this.held.size === 0) return;
    if (this.svc.circuits.redis?.isOpen) return this.arm();
    const writes: CursorWrite[] = [];
    for (const [member, threads] of this.held)
      for (const [thread, c] of threads) writes.push({ member, thread, acked: c.acked, above: c.above });
    this.held.clear();
    void this.write(writes);
  }

  /** Stop retrying; what is under way is waited for (the node stops: bounded by its shutdown grace). */
  async close(): Promise<void> {
    this.retry();
    this.closed = true;
    clearTimeout(this.timer);
    await Promise.allSettled([...this.sending]);
    if (this.held.size > 0)
      this.svc.log.warn({ members: this.held.size }, "cursor copies not written at shutdown (Redis out of reach)");
  }

  private landed(writes: CursorWrite[]): void {
    for (const w of writes) {
      const n = (this.flying.get(w.member) ?? 1) - 1;
      if (n <= 0) this.flying.delete(w.member);
      else this.flying.set(w.member, n);
    }
  }

  private hold(writes: CursorWrite[]): void {
    for (const w of writes) {
      let threads = this.held.get(w.member);
      if (threads === undefined) {
        if (this.held.size >= HELD_MAX) {
          // the oldest held member goes: its polls may read an older cursor from the logs while Postgres is away
          this.held.delete(this.held.keys().next().value!);
          if (this.dropped++ === 0) this.svc.log.warn({ max: HELD_MAX }, "cursor copies dropped: too many held");
        }
        threads = new Map();
        this.held.set(w.member, threads);
      }
      threads.set(w.thread, mergeCursor(threads.get(w.thread), w.acked, w.above));
    }
    this.arm();
  }

  private arm(): void {
    if (this.timer !== undefined || this.closed) return;
    this.timer = setTimeout(() => this.retry(), RETRY_MS);
    this.timer.unref();
  }
}
