// Redis side of the stream logs: a Redis stream per inbox or group (`st:{<key>}`), capped at STREAM_LOG_MAX entries
// and expiring when idle; an append and its announcement are one script call (streamAppend-1.lua), a read one
// XREVRANGE of the whole log.
import type { StreamId } from "../../messaging/stream-id.ts";
import { above, type Published, STREAM_LOG_IDLE_MS, STREAM_LOG_MAX, type StreamLog } from "../stream-log.ts";
import type { Keys } from "./keys.ts";
import type { ScriptedRedis } from "./scripts.ts";

export class RedisStreamLog implements StreamLog {
  constructor(
    private readonly redis: ScriptedRedis,
    private readonly keys: Keys,
    /** Dropped this long after its last append (STREAM_LOG_IDLE_MS, or the messages' retention when shorter). */
    private readonly idleMs = STREAM_LOG_IDLE_MS,
  ) {}

  async append(m: Published, channel: string, head: string): Promise<void> {
    await this.redis.streamAppend(
      this.keys.streamLog(m.key),
      m.seq,
      m.id,
      m.payload,
      STREAM_LOG_MAX,
      this.idleMs,
      this.keys.channel(channel),
      head,
    );
  }

  async drop(key: StreamId): Promise<void> {
    await this.redis.del(this.keys.streamLog(key));
  }

  async after(key: StreamId, after: number): Promise<Published[]> {
    const got = await this.redis.xrevrange(this.keys.streamLog(key), "+", "-", "COUNT", STREAM_LOG_MAX);
    const entries: Published[] = [];
    for (const [, fields] of got) {
      const f = new Map<string, string>();
      for (let i = 0; i + 1 < fields.length; i += 2) f.set(fields[i]!, fields[i + 1]!);
      const seq = Number(f.get("s"));
      const id = f.get("i");
      const payload = f.get("p");
      if (Number.isSafeInteger(seq) && id !== undefined && payload !== undefined)
        entries.push({ key, seq, id, payload });
    }
    return above(entries, after);
  }
}
