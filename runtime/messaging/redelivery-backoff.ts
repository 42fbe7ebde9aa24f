// While a member's acks fail (a backend is out), its long polls would hand the same unacknowledged messages back at
// once, poll after poll: a hot loop that runs delivery counts up by the hundred (issue 38). So after an ack of the
// member failed, a poll hands out again only once a backoff has passed since its last hand-out (1 s, doubling, at
// most 8 s), and a poll that cannot wait that long answers nothing, without reading (so nothing counts as handed
// out). A successful ack ends it; so does a minute without a failed ack.

const FIRST_MS = 1000;
const MAX_MS = 8000;
/** A member whose acks have not failed for this long is treated normally again. */
const FORGET_MS = 60_000;
const MEMBERS_MAX = 100_000;

export class RedeliveryBackoff {
  private readonly members = new Map<string, { handedAt: number; backoffMs: number; failedAt: number }>();

  /** `now`: the node's clock (ms). */
  constructor(private readonly now: () => number) {}

  /** An ack of `member` failed (its message stays unacknowledged). */
  ackFailed(member: string): void {
    const e = this.members.get(member);
    if (e !== undefined) e.failedAt = this.now();
    else {
      if (this.members.size >= MEMBERS_MAX) this.members.clear();
      this.members.set(member, { handedAt: -Infinity, backoffMs: FIRST_MS, failedAt: this.now() });
    }
  }

  /** An ack of `member` succeeded. */
  ackDone(member: string): void {
    this.members.delete(member);
  }

  /** How long a poll of `member` must wait before it may hand anything out (0: now). */
  holdMs(member: string): number {
    const e = this.members.get(member);
    if (e === undefined) return 0;
    const now = this.now();
    if (now - e.failedAt >= FORGET_MS) {
      this.members.delete(member);
      return 0;
    }
    return Math.max(0, e.handedAt + e.backoffMs - now);
  }

  /** Members held now (or until their next poll finds a minute passed). */
  get size(): number {
    return this.members.size;
  }

  /** A poll of `member` handed messages out. */
  handedOut(member: string): void {
    const e = this.members.get(member);
    if (e === undefined) return;
    if (e.handedAt !== -Infinity) e.backoffMs = Math.min(e.backoffMs * 2, MAX_MS);
    e.handedAt = this.now();
  }
}
