// Time-ordered 64-bit ids: 41 bits of milliseconds since the Flock epoch, 10 bits of node id, 12 bits of sequence.
// Newer ids are larger; as decimal strings of the same length they also sort as strings, and they are compared
// numerically (BigInt) wherever order matters. The ids' format (prefixes, parsing) is schema/ids.ts, shared with the
// request schemas; it is re-exported here for the runtime and the handlers.

import { type IdKind, PREFIX } from "../schema/ids.ts";

export { type IdKind, isAgentId, isHumanId, parseId, PREFIX } from "../schema/ids.ts";

const EPOCH_MS = 1_767_225_600_000; // 2026-01-01T00:00:00Z

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

/** Milliseconds since the Unix epoch encoded in a raw id. */
export function idTime(raw: bigint): number {
  return Number(raw >> 22n) + EPOCH_MS;
}

/** The smallest raw id an IdGenerator makes at `ms` (ids made before it are smaller): a time as an id bound. */
export function firstIdAt(ms: number): bigint {
  return BigInt(Math.max(0, Math.floor(ms) - EPOCH_MS)) << 22n;
}
