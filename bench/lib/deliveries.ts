// Counting deliveries in a soak: every accepted send is expected by a known set of receivers; each receipt is timed
// from the send's start (a receipt may come before the send's answer). Duplicates (at-least-once) and receipts of
// sends that failed are counted, not timed. Latencies go to a Recorder that reports each 10 s sample and each window.
import { quantile } from "./load.ts";

export interface Quantiles {
  n: number;
  p50: number;
  p99: number;
  max: number;
}

export function quantiles(values: number[]): Quantiles {
  const s = values.sort((a, b) => a - b);
  return { n: s.length, p50: quantile(s, 0.5), p99: quantile(s, 0.99), max: s.length ? s[s.length - 1]! : 0 };
}

/** Latencies kept twice over: for the current sample and for the current window, each taken (and reset) apart. */
export class Recorder {
  private sample: number[] = [];
  private window: number[] = [];

  add(ms: number): void {
    this.sample.push(ms);
    this.window.push(ms);
  }

  takeSample(): Quantiles {
    const q = quantiles(this.sample);
    this.sample = [];
    return q;
  }

  takeWindow(): Quantiles {
    const q = quantiles(this.window);
    this.window = [];
    return q;
  }
}

interface Expected {
  t0: number;
  left: Set<number>;
}

export class Deliveries {
  private readonly waiting = new Map<string, Expected>();
  readonly latency = new Recorder();
  /** receipts expected of accepted sends, and those that came */
  expected = 0;
  received = 0;
  duplicates = 0;
  unexpected = 0;

  /** A send is about to start: `receivers` are expected to get `key`. */
  sending(key: string, receivers: number[]): void {
    this.waiting.set(key, { t0: performance.now(), left: new Set(receivers) });
  }

  /** The send was accepted: its receipts now count as expected. */
  accepted(key: string, receivers: number): void {
    this.expected += receivers;
  }

  /** The send failed: its receipts are no longer waited for. */
  failed(key: string): void {
    this.waiting.delete(key);
  }

  got(key: string, receiver: number): void {
    const e = this.waiting.get(key);
    if (!e) {
      this.unexpected++;
      return;
    }
    if (!e.left.delete(receiver)) {
      this.duplicates++;
      return;
    }
    this.received++;
    this.latency.add(performance.now() - e.t0);
    if (e.left.size === 0) this.waiting.delete(key);
  }

  /** Receipts still awaited. */
  outstanding(): number {
    let n = 0;
    for (const e of this.waiting.values()) n += e.left.size;
    return n;
  }

  /** Receipts awaited for longer than `ms`. */
  overdue(ms: number): number {
    const limit = performance.now() - ms;
    let n = 0;
    for (const e of this.waiting.values()) if (e.t0 < limit) n += e.left.size;
    return n;
  }
}
