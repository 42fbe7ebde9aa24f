// In-process remembered stream cursors (the embedded single node): a map per member.
import { type CursorWrite, mergeCursor, type StreamCursorCache, type StreamCursorState } from "../stream-cursors.ts";

export class MemoryStreamCursors implements StreamCursorCache {
  private readonly byMember = new Map<string, Map<bigint, StreamCursorState>>();

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

  async read(member: string, threads: bigint[]): Promise<Map<bigint, StreamCursorState>> {
    const mine = this.byMember.get(member);
    const out = new Map<bigint, StreamCursorState>();
    for (const t of threads) {
      const c = mine?.get(t);
      if (c !== undefined) out.set(t, { acked: c.acked, above: [...c.above] });
    }
    return out;
  }
}
