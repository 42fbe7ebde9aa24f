// In-process remembered group cursors (the embedded single node): a map per member.
import { type GroupCursorCache, type GroupCursorState, mergeCursor } from "../group-cursors.ts";

export class MemoryGroupCursors implements GroupCursorCache {
  private readonly byMember = new Map<string, Map<bigint, GroupCursorState>>();

  async merge(member: string, thread: bigint, acked: number, above: number[], seedOnly = false): Promise<void> {
    let mine = this.byMember.get(member);
    if (mine === undefined) {
      mine = new Map();
      this.byMember.set(member, mine);
    }
    const was = mine.get(thread);
    if (was !== undefined && seedOnly) return;
    mine.set(thread, mergeCursor(was, acked, above));
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
