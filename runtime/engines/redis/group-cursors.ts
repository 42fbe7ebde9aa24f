// Redis side of the remembered group cursors: one hash per member (`gc:{<member>}`), a field per group for the acked
// number and one for the numbers acked above it; a merge is one script (groupCursorMerge-1.lua), a read one HMGET.
import { GROUP_CURSOR_TTL_MS, type GroupCursorCache, type GroupCursorState } from "../group-cursors.ts";
import type { Keys } from "./keys.ts";
import type { ScriptedRedis } from "./scripts.ts";

export class RedisGroupCursors implements GroupCursorCache {
  constructor(
    private readonly redis: ScriptedRedis,
    private readonly keys: Keys,
  ) {}

  async merge(member: string, thread: bigint, acked: number, above: number[], seedOnly = false): Promise<void> {
    await this.redis.groupCursorMerge(this.keys.groupCursors(member), String(thread), acked, above.join(","), seedOnly ? 1 : 0, GROUP_CURSOR_TTL_MS);
  }

  async read(member: string, threads: bigint[]): Promise<Map<bigint, GroupCursorState>> {
    const out = new Map<bigint, GroupCursorState>();
    if (threads.length === 0) return out;
    const fields = threads.flatMap((t) => [String(t), `${t}+`]);
    const got = await this.redis.hmget(this.keys.groupCursors(member), ...fields);
    threads.forEach((t, i) => {
      const acked = got[2 * i];
      if (acked === null || acked === undefined) return;
      const above = got[2 * i + 1];
      out.set(t, { acked: Number(acked), above: above ? above.split(",").map(Number) : [] });
    });
    return out;
  }
}
