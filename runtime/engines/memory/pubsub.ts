// In-process pub/sub: a single node talks to itself.
import type { PubSub, PubSubHandler } from "../pubsub.ts";

export class MemoryPubSub implements PubSub {
  private readonly handlers = new Map<string, Set<PubSubHandler>>();

  async publish(channel: string, payload: Buffer | string): Promise<void> {
    const set = this.handlers.get(channel);
    if (!set) return;
    const buf = typeof payload === "string" ? Buffer.from(payload) : payload;
    queueMicrotask(() => {
      for (const h of set) h(buf);
    });
  }

  async subscribe(channel: string, handler: PubSubHandler): Promise<() => Promise<void>> {
    let set = this.handlers.get(channel);
    if (!set) {
      set = new Set();
      this.handlers.set(channel, set);
    }
    set.add(handler);
    return async () => {
      set.delete(handler);
      if (set.size === 0) this.handlers.delete(channel);
    };
  }
}
