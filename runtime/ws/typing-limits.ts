// The limits on typing frames. A typing event fans out to every other member of a thread (up to 9,999 in a group), so
// what goes out is bounded per principal and thread (a start at most every TYPING_REPEAT_MS; typing.ts announces a
// stop only after a start of the same connection went out), and a connection that sends typing frames faster than
// its budget is treated as abusive and closed (WS_CLOSE.typingFlood). Time is an argument: the node's clock.

/** Typing frames one connection may send at once, and how many a second it earns back. Past them: closed. */
export const TYPING_BURST = 20;
export const TYPING_PER_SECOND = 10;
/** A principal's start in a thread is published at most this often (on each node); starts between reach nobody. */
export const TYPING_REPEAT_MS = 3_000;
/** The start gate is swept of lapsed entries once it holds this many (and again at twice what is left). */
const GATE_SWEEP_AT = 10_000;

/** A token bucket over one connection's typing frames. */
export class TypingBudget {
  private tokens = TYPING_BURST;

  constructor(private at: number) {}

  /** Take one frame's token at `now`; false when the connection is past its budget. */
  take(now: number): boolean {
    if (now > this.at) {
      this.tokens = Math.min(TYPING_BURST, this.tokens + ((now - this.at) * TYPING_PER_SECOND) / 1000);
      this.at = now;
    }
    if (this.tokens < 1) return false;
    this.tokens -= 1;
    return true;
  }
}

/** When each principal last had a typing start published in each thread, on this node. */
export class StartGate {
  private readonly last = new Map<string, number>();
  private sweepAt = GATE_SWEEP_AT;

  /** Whether a start of `principal` in `thread` may go out at `now`; if so it is recorded as gone out. */
  pass(principal: string, thread: string, now: number): boolean {
    const key = `${principal} ${thread}`;
    const at = this.last.get(key);
    // a clock that went back does not hold starts up for the difference
    if (at !== undefined && now >= at && now - at < TYPING_REPEAT_MS) return false;
    if (this.last.size >= this.sweepAt) this.sweep(now);
    this.last.set(key, now);
    return true;
  }

  /** How many entries are kept (for tests). */
  get size(): number {
    return this.last.size;
  }

  private sweep(now: number): void {
    for (const [key, at] of this.last) if (now < at || now - at >= TYPING_REPEAT_MS) this.last.delete(key);
    this.sweepAt = Math.max(GATE_SWEEP_AT, 2 * this.last.size);
  }
}
