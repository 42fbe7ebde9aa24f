// Producers throttle themselves below the limit (SPEC section 7): sends are spaced at least 1/rate apart,
// shared by everything that uses one client instance.

export interface Clock {
  now(): number;
  sleep(ms: number, signal?: AbortSignal): Promise<void>;
}

export const realClock: Clock = {
  now: () => Date.now(),
  sleep: (ms, signal) =>
    new Promise((resolve, reject) => {
      if (signal?.aborted) return reject(signal.reason);
      const t = setTimeout(() => {
        signal?.removeEventListener("abort", onAbort);
        resolve();
      }, ms);
      const onAbort = () => {
        clearTimeout(t);
        reject(signal!.reason);
      };
      signal?.addEventListener("abort", onAbort, { once: true });
    }),
};

/**
 * A send throttle: at most `perSecond` calls of `wait` resolve per second, in the order they were made (the SDK
 * keeps its sends below the server's 10 a second with one).
 * @example
 * ```ts
 * const throttle = new Throttle(8);
 * await throttle.wait(); // at once; the ninth within a second waits its turn
 * ```
 */
export class Throttle {
  private next = 0;

  constructor(
    private readonly perSecond: number,
    private readonly clock: Clock,
  ) {
    if (!(perSecond > 0)) throw new RangeError("throttle rate must be positive");
  }

  /**
   * Resolves when the caller may send; reserves its slot first, so concurrent callers queue fairly.
   * @example
   * ```ts
   * const throttle = new Throttle(8); // 8 a second
   * for (const to of recipients) {
   *   await throttle.wait();
   *   await fetch(`${baseUrl}/v1/messages`, { method: "POST", headers, body });
   * }
   * ```
   */
  async wait(signal?: AbortSignal): Promise<void> {
    const gap = 1000 / this.perSecond;
    const now = this.clock.now();
    const slot = Math.max(now, this.next);
    this.next = slot + gap;
    if (slot > now) await this.clock.sleep(slot - now, signal);
  }
}
