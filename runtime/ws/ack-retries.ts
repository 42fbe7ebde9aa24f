// A WebSocket ack refused because a backend was out (its error frame said `unavailable`) is retried by the node, on
// that socket, until it takes: every 250 ms, then every 500 ms, so the message is acknowledged within about half a
// second of the backend's return, without the client acking again or reconnecting (issue 38, case 2). One that
// takes is answered with an ack frame when the client's ack carried a ref. At most ACKS_MAX are held per socket.
import { isOutage } from "../circuit.ts";
import type { Level } from "../metrics.ts";

const FIRST_MS = 250;
const EVERY_MS = 500;
const ACKS_MAX = 1000;

export interface RefusedAck {
  /** The message id as the client sent it. */
  id: string;
  raw: bigint;
  through: boolean;
  ref?: string | number;
}

export class AckRetries {
  private readonly pending = new Map<string, RefusedAck>();
  private timer: NodeJS.Timeout | undefined;
  private delay = FIRST_MS;
  private stopped = false;

  constructor(
    /** Acknowledge for the socket's principal (false: not its message). */
    private readonly ack: (raw: bigint, through: boolean) => Promise<boolean>,
    /** It took: tell the client when it asked (a ref). */
    private readonly done: (a: RefusedAck) => void,
    /** flock_ack_retries_pending: the acks held, on every socket of the node (runtime/metrics.ts). */
    private readonly held: Pick<Level, "inc" | "dec">,
  ) {}

  add(a: RefusedAck): void {
    if (this.stopped) return;
    if (this.pending.size >= ACKS_MAX) this.forget(this.pending.keys().next().value!);
    const key = `${a.id} ${a.through}`;
    if (!this.pending.has(key)) this.held.inc();
    this.pending.set(key, a);
    this.schedule();
  }

  stop(): void {
    this.stopped = true;
    clearTimeout(this.timer);
    if (this.pending.size > 0) this.held.dec(this.pending.size);
    this.pending.clear();
  }

  private forget(key: string): void {
    if (this.pending.delete(key)) this.held.dec();
  }

  private schedule(): void {
    if (this.timer !== undefined || this.stopped || this.pending.size === 0) return;
    this.timer = setTimeout(() => void this.retry(), this.delay);
    this.timer.unref();
  }

  private async retry(): Promise<void> {
    for (const [key, a] of [...this.pending]) {
      if (this.stopped) return;
      try {
        const mine = await this.ack(a.raw, a.through);
        this.forget(key);
        if (mine) this.done(a);
      } catch (err) {
        if (!isOutage(err)) this.forget(key);
        else break; // still out: the rest wait for the next turn
      }
    }
    this.timer = undefined;
    this.delay = EVERY_MS;
    if (this.pending.size === 0) this.delay = FIRST_MS;
    this.schedule();
  }
}
