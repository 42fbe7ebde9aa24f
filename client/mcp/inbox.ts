// wait_for_messages keeps Flock's at-least-once delivery: what a wait returns is acknowledged only by the NEXT wait
// (or the ack tool), so a model that crashes, or a server that stops, before handling a message gets it again, with
// a higher delivery_count. The ids handed out and not yet acked are held here, per MCP session.
import type { Flock } from "../index.ts";
import { FlockError } from "../errors.ts";
import type { Message } from "../types.ts";

export class Inbox {
  private readonly handedOut = new Set<string>();

  constructor(private readonly flock: () => Flock) {}

  /** Messages handed out by the last wait(s) and not acknowledged yet. */
  get unacked(): string[] {
    return [...this.handedOut];
  }

  /**
   * Acknowledge what the previous wait returned (unless `ackPrevious` is false), then long poll up to
   * `timeoutSeconds` for messages: unacknowledged ones come first, again.
   */
  async wait(
    opts: { timeoutSeconds: number; limit?: number; ackPrevious: boolean },
    signal?: AbortSignal,
  ): Promise<{ acked: string[]; messages: Message[] }> {
    const acked = opts.ackPrevious ? await this.ack(this.unacked, signal) : [];
    const messages = await this.flock().pending({ timeout: opts.timeoutSeconds, limit: opts.limit }, { signal });
    for (const m of messages) this.handedOut.add(m.id);
    return { acked, messages };
  }

  /** Acknowledge messages for good; answers the ids acked (one already acked or unknown counts as done). */
  async ack(ids: string[], signal?: AbortSignal): Promise<string[]> {
    const done: string[] = [];
    for (const id of ids) {
      try {
        await this.flock().ack(id, { signal });
      } catch (err) {
        if (!(err instanceof FlockError && err.status === 404)) throw err;
      }
      this.handedOut.delete(id);
      done.push(id);
    }
    return done;
  }
}
