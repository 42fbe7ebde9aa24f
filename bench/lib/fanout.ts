// Drives a fan-out: `publish(seq)` sends one payload stamped with its send time; every receiver reports what it
// gets; we count deliveries and time each from send to receipt. At most `inFlight` publishes outstanding.
import { summarize } from "./load.ts";

export interface FanoutOptions {
  receivers: number;
  duration: number;
  inFlight: number;
  /** Sends publish number `seq`; the payload must carry `seq` so receivers can report it. */
  publish(seq: number): Promise<void>;
}

export interface FanoutProbe {
  /** Call from a receiver for each payload it got. */
  received(seq: number): void;
  run(): Promise<ReturnType<typeof summarize> & { errors: number; published: number; complete: number }>;
}

export function fanout(opts: FanoutOptions): FanoutProbe {
  const sentAt = new Map<number, number>();
  const remaining = new Map<number, number>();
  const waiters = new Map<number, () => void>();
  const latencies: number[] = [];
  let measuring = false;
  return {
    received(seq) {
      const t0 = sentAt.get(seq);
      if (t0 === undefined) return;
      if (measuring) latencies.push(performance.now() - t0);
      const left = (remaining.get(seq) ?? 0) - 1;
      remaining.set(seq, left);
      if (left <= 0) {
        sentAt.delete(seq);
        remaining.delete(seq);
        waiters.get(seq)?.();
        waiters.delete(seq);
      }
    },
    async run() {
      let seq = 0;
      let errors = 0;
      let complete = 0;
      measuring = true;
      const started = performance.now();
      const deadline = started + opts.duration * 1000;
      await Promise.all(
        Array.from({ length: opts.inFlight }, async () => {
          while (performance.now() < deadline) {
            const s = seq++;
            const done = new Promise<void>((resolve) => {
              waiters.set(s, resolve);
            });
            sentAt.set(s, performance.now());
            remaining.set(s, opts.receivers);
            try {
              await opts.publish(s);
            } catch {
              errors++;
              waiters.delete(s);
              continue;
            }
            const timeout = new Promise<boolean>((r) => setTimeout(() => r(false), 5000));
            if (await Promise.race([done.then(() => true), timeout])) complete++;
          }
        }),
      );
      measuring = false;
      const seconds = (performance.now() - started) / 1000;
      return { ...summarize(latencies, seconds), errors, published: seq, complete };
    },
  };
}
