// A process's resident memory read every second from /proc/<pid>/statm, so that a soak sample (every 10 s) reports the
// median of the readings since the last one: a single reading swings by a fifth with the garbage collector's cycle.
import { readFileSync } from "node:fs";

const PAGE_BYTES = 4096;

export class RssReader {
  private readings: number[] = [];
  private readonly timer: NodeJS.Timeout;

  constructor(
    private readonly pid: number,
    everyMs = 1000,
  ) {
    this.read();
    this.timer = setInterval(() => this.read(), everyMs);
    this.timer.unref();
  }

  /** The median of the readings since the last take (bytes), NaN when there were none; starts anew. */
  take(): number {
    const r = this.readings.sort((a, b) => a - b);
    this.readings = [];
    if (r.length === 0) return NaN;
    const mid = Math.floor(r.length / 2);
    return r.length % 2 ? r[mid]! : (r[mid - 1]! + r[mid]!) / 2;
  }

  stop(): void {
    clearInterval(this.timer);
  }

  private read(): void {
    try {
      const resident = Number(readFileSync(`/proc/${this.pid}/statm`, "utf8").split(" ")[1]);
      if (Number.isFinite(resident)) this.readings.push(resident * PAGE_BYTES);
    } catch {
      // the process is gone: no reading
    }
  }
}
