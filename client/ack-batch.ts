// Batched, cumulative acks for group messages: a busy group's messages are acknowledged once per batch with one
// cumulative ack per thread (the server then moves the member's cursor in that group past it: one row, however many
// messages), instead of one ack per message. Direct messages are acknowledged one by one as before. Only handled messages are ever
// acknowledged: the batch holds, per thread, the last message whose handler finished.
import type { Clock } from "./throttle.ts";
import type { Message } from "./types.ts";

/**
 * A batch's bounds when the caller gives none. An ack costs the server a frame, a statement's row and a Redis write
 * whatever it covers, and a message not acknowledged yet only comes again after a reconnect: at 25 messages a
 * second to 999 members, acks every 50 ms held the fan-out to 10 messages a second, every second let it pass 25
 * (bench/RESULTS.md, "Issue 20, a fourth session").
 */
export const ACK_BATCH_DEFAULTS = { messages: 100, ms: 1000 } as const;

export interface AckBatchOptions {
  /** Acknowledge once this many group messages are handled (default 100; 1 acks each message on its own). */
  messages?: number;
  /** ... or once the oldest handled one has waited this long, in ms (default 1000; null: only at `flush`). */
  ms?: number | null;
}

/** Sends one ack; `through`: cumulative. Resolves once the server answered (or the message will come again). */
export type AckSend = (id: string, through: boolean) => Promise<void>;

const isGroup = (m: Message) => m.to.startsWith("group_");

export class AckBatch {
  /** Per thread: the last handled message, and how many of the thread the batch holds. */
  private readonly last = new Map<string, { id: string; n: number }>();
  private held = 0;
  private timer: Promise<void> | undefined;
  private readonly max: number;
  private readonly ms: number | null;

  constructor(
    private readonly send: AckSend,
    private readonly clock: Clock,
    opts: AckBatchOptions = {},
  ) {
    this.max = Math.max(1, opts.messages ?? ACK_BATCH_DEFAULTS.messages);
    this.ms = opts.ms === null ? null : Math.max(0, opts.ms ?? ACK_BATCH_DEFAULTS.ms);
  }

  /** A message's handler finished: acknowledge it now (direct) or with its batch (group). */
  async handled(m: Message): Promise<void> {
    if (this.max === 1 || !isGroup(m)) {
      await this.send(m.id, false);
      return;
    }
    this.last.set(m.thread_id, { id: m.id, n: (this.last.get(m.thread_id)?.n ?? 0) + 1 });
    if (++this.held >= this.max) {
      await this.flush();
      return;
    }
    if (this.ms === null) return;
    // the timer flushes what is held when it fires (a flush meanwhile leaves it nothing, or a later batch); an ack
    // that fails there leaves its messages unacknowledged: they come again
    this.timer ??= this.clock
      .sleep(this.ms)
      .then(() => {
        this.timer = undefined;
        return this.flush();
      })
      .catch(() => {
        this.timer = undefined;
      });
  }

  /**
   * Acknowledge everything held now: one cumulative ack per thread, a plain one for a thread with one message held
   * (a slow group's batches hold one message each: a cumulative ack costs the server a look back it then does not need).
   */
  async flush(): Promise<void> {
    if (this.held === 0) return;
    const held = [...this.last.values()];
    this.last.clear();
    this.held = 0;
    await Promise.all(held.map((h) => this.send(h.id, h.n > 1)));
  }
}
