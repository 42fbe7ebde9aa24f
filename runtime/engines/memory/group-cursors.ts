// In-process remembered group cursors (the embedded single node): a map per member.
import { type CursorWrite, type GroupCursorCache, type GroupCursorState, mergeCursor } from "../group-cursors.ts";

export class MemoryGroupCursors implements GroupCursorCache {
  private readonly byMember = new Map<string, Map<bigint, GroupCursorState>>();

  async merge(writes: CursorWrite[]): Promise<void> {
    for (const w of writes) {
      let mine = this.byMember.get(w.member);
      if (mine === undefined) {
        mine = new Map();
        this.byMember.set(w.member, mine);
      }
      const was = mine.get(w.thread);
      if (was !== undefined && w.ifAbsent) continue;
      mine.set(w.thread, mergeCursor(was, w.acked, w.above));
    }
  }

  async read(member: string, threads: bigint[]): Promise<Map<bigint, GroupCursorState>> {
    const mine = this.byMember.get(member);
    const out = new Map<bigint, GroupCursorState>();
    for (const t of threads) {
      const c = mine?.get(t);
      if (c !== undefined) out.set(t, { acked: c.acked, above: [...c.above] });
    }
    return out;
  }
}
