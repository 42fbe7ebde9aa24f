// Redis side of the remembered stream cursors: one hash per member (`gc:{<member>}`: the name stays, as renaming a key
// would change the keyspace's layout for the release before), a field per stream (its thread id: 0 for the inbox) for
// the acked number and one for the numbers acked above it; a batch of merges is one script call
// (streamCursorMerge-n.lua; on a cluster one per slot), a read one HMGET.
import {
  type CursorWrite,
  STREAM_CURSOR_TTL_MS,
  type StreamCursorCache,
  type StreamCursorState,
} from "../stream-cursors.ts";
import type { Keys } from "./keys.ts";
import type { ScriptedRedis } from "./scripts.ts";
import { perSlot } from "./slots.ts";

export class RedisStreamCursors implements StreamCursorCache {
  constructor(
    private readonly redis: ScriptedRedis,
    private readonly keys: Keys,
    private readonly opts: { clustered: boolean },
  ) {}

  async merge(writes: CursorWrite[]): Promise<void> {
    if (writes.length === 0) return;
    await perSlot(
      this.opts.clustered,
      writes,
      (w) => this.keys.streamCursors(w.member),
      async (group) => {
        const keys = group.map((w) => this.keys.streamCursors(w.member));
        const args = group.flatMap((w) => [String(w.thread), w.acked, w.above.join(","), w.ifAbsent ? 1 : 0]);
        await this.redis.streamCursorMerge(keys.length, ...keys, STREAM_CURSOR_TTL_MS, ...args);
        return group.map(() => undefined);
      },
    );
  }

  async read(member: string, threads: bigint[]): Promise<Map<bigint, StreamCursorState>> {
    const out = new Map<bigint, StreamCursorState>();
    if (threads.length === 0) return out;
    const fields = threads.flatMap((t) => [String(t), `${t}+`]);
    const got = await this.redis.hmget(this.keys.streamCursors(member), ...fields);
    threads.forEach((t, i) => {
      const acked = got[2 * i];
      if (acked === null || acked === undefined) return;
      const above = got[2 * i + 1];
      out.set(t, { acked: Number(acked), above: above ? above.split(",").map(Number) : [] });
    });
    return out;
  }
}
