// A clock tests drive by hand: sleeping advances it at once, so time-dependent code runs without waiting.
import type { Clock } from "../../client/throttle.ts";

export class FakeClock implements Clock {
  readonly sleeps: number[] = [];
  constructor(
    public t = 1_800_000_000_000,
    /** Whether sleep() moves time forward (false: time stands still). */
    public advanceOnSleep = true,
  ) {}
  now = () => this.t;
  async sleep(ms: number, signal?: AbortSignal): Promise<void> {
    if (signal?.aborted) throw signal.reason;
    this.sleeps.push(ms);
    if (this.advanceOnSleep) this.t += ms;
  }
}
