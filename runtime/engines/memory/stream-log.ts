// In-process stream logs (the embedded single node): the newest messages of each stream, in memory.
import type { StreamId } from "../../messaging/stream-id.ts";
import type { PubSub } from "../pubsub.ts";
import { above, type Published, STREAM_LOG_IDLE_MS, STREAM_LOG_MAX, type StreamLog } from "../stream-log.ts";

/** Streams kept at most; the least recently appended goes first. */
const STREAMS_MAX = 10_000;

export class MemoryStreamLog implements StreamLog {
  private readonly logs = new Map<StreamId, { entries: Published[]; at: number }>();

  constructor(
    private readonly pubsub: PubSub,
    private readonly now: () => number = Date.now,
    /** Dropped this long after its last append (STREAM_LOG_IDLE_MS, or the messages' retention when shorter). */
    private readonly idleMs = STREAM_LOG_IDLE_MS,
  ) {}

  async append(m: Published, channel: string, head: string): Promise<void> {
    const at = this.now();
    let log = this.live(m.key, at);
    if (log === undefined) {
      if (this.logs.size >= STREAMS_MAX) this.logs.delete(this.logs.keys().next().value!);
      log = { entries: [], at };
    }
    this.logs.delete(m.key);
    this.logs.set(m.key, log);
    log.at = at;
    log.entries.push({ ...m });
    if (log.entries.length > STREAM_LOG_MAX) log.entries.shift();
    await this.pubsub.publish(channel, head + m.payload);
  }

  async after(key: StreamId, after: number): Promise<Published[]> {
    return above(this.live(key, this.now())?.entries ?? [], after).map((m) => ({ ...m }));
  }

  async drop(key: StreamId): Promise<void> {
    this.logs.delete(key);
  }

  private live(key: StreamId, now: number): { entries: Published[]; at: number } | undefined {
    const log = this.logs.get(key);
    if (log !== undefined && now - log.at >= this.idleMs) {
      this.logs.delete(key);
      return undefined;
    }
    return log;
  }
}
