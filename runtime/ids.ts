// Time-ordered 64-bit ids: 41 bits of milliseconds since the Flock epoch, 10 bits of node id, 12 bits of sequence.
// Newer ids are larger; as decimal strings of the same length they also sort as strings, and they are compared
// numerically (BigInt) wherever order matters.

export const EPOCH_MS = 1_767_225_600_000; // 2026-01-01T00:00:00Z

export const PREFIX = {
  moment: "moment_",
  comment: "comment_",
  message: "msg_",
  thread: "thread_",
  group: "group_",
  file: "file_",
  request: "freq_",
  payment: "pay_",
  human: "P",
  agent: "",
} as const;

export type IdKind = keyof typeof PREFIX;

export class IdGenerator {
  private lastMs = 0;
  private seq = 0;

  constructor(
    private nodeId: number,
    private readonly now: () => number = Date.now,
  ) {
    if (nodeId < 0 || nodeId > 1023) throw new RangeError("node id must be 0-1023");
  }

  /** Generate under another node id from now on (the node's lease moved: runtime/node-lease.ts). */
  switchTo(nodeId: number): void {
    if (nodeId < 0 || nodeId > 1023) throw new RangeError("node id must be 0-1023");
    this.nodeId = nodeId;
  }

  /** A new raw id as a bigint. */
  nextRaw(): bigint {
    let ms = this.now();
    if (ms < this.lastMs) ms = this.lastMs; // clock went back: stay monotonic
    if (ms === this.lastMs) {
      this.seq = (this.seq + 1) & 0xfff;
      if (this.seq === 0) ms = this.lastMs + 1; // sequence exhausted: borrow the next millisecond
    } else {
      this.seq = 0;
    }
    this.lastMs = ms;
    return (BigInt(ms - EPOCH_MS) << 22n) | (BigInt(this.nodeId) << 12n) | BigInt(this.seq);
  }

  next(kind: IdKind): string {
    return PREFIX[kind] + this.nextRaw().toString();
  }
}

/** Parse `<prefix><digits>` back to its numeric part; null when the shape is wrong. */
export function parseId(kind: IdKind, id: string): bigint | null {
  const prefix = PREFIX[kind];
  if (!id.startsWith(prefix)) return null;
  const digits = id.slice(prefix.length);
  if (!/^[0-9]{1,19}$/.test(digits)) return null;
  const n = BigInt(digits);
  return n < 2n ** 63n ? n : null;
}

/** Milliseconds since the Unix epoch encoded in a raw id. */
export function idTime(raw: bigint): number {
  return Number(raw >> 22n) + EPOCH_MS;
}

export const isAgentId = (id: string) => parseId("agent", id) !== null;
export const isHumanId = (id: string) => parseId("human", id) !== null;
