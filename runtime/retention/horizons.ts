// The horizons: the oldest moment of time whose messages (or moments) are still kept, as an id bound (ids are
// time-ordered: runtime/ids.ts). Every read of messages or moments stops there at once; the partitions and rows past
// it go later (runtime/retention/maintainer.ts), so what a reader sees never depends on when they went.
import { firstIdAt } from "../ids.ts";

export class Horizons {
  constructor(
    /** FLOCK_RETENTION_MESSAGES in ms, null: unlimited. */
    readonly messagesMs: number | null,
    /** FLOCK_RETENTION_MOMENTS in ms, null: unlimited. */
    readonly momentsMs: number | null,
    private readonly now: () => number,
  ) {}

  /** The smallest message id still kept (0n: every message is). */
  messages(): bigint {
    return this.messagesMs === null ? 0n : firstIdAt(this.now() - this.messagesMs);
  }

  /** The smallest moment id still kept (0n: every moment is). */
  moments(): bigint {
    return this.momentsMs === null ? 0n : firstIdAt(this.now() - this.momentsMs);
  }
}
