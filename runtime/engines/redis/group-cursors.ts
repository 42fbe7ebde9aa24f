// Redis side of the remembered group cursors: one hash per member (`gc:{<member>}`), a field per group for the acked
// number and one for the numbers acked above it; a batch of merges is one script call (groupCursorMerge-n.lua; on a
// cluster one per slot), a read one HMGET.
import {
  type CursorWrite,
  GROUP_CURSOR_TTL_MS,
  type GroupCursorCache,
  type GroupCursorState,
} from "../group-cursors.ts";
import type { Keys } from "./keys.ts";
import type { ScriptedRedis } from "./scripts.ts";
import { perSlot } from "./slots.ts";

export class RedisGroupCursors implements GroupCursorCache {
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
      (w) => this.keys.groupCursors(w.member),
      async (group) => {
        const keys = group.map((w) => this.keys.groupCursors(w.member));
        const args = group.flatMap((w) => [String(w.thread), w.acked, w.above.join(","), w.ifAbsent ? 1 : 0]);
        await this.redis.groupCursorMerge(keys.length, ...keys, GROUP_CURSOR_TTL_MS, ...args);
        return group.map(() => undefined);
      },
    );
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
