// Redis pub/sub: one subscriber connection per node whatever the number of channels or listeners.
import type { Redis } from "ioredis";
import type { PubSub, PubSubHandler } from "../pubsub.ts";
import type { Keys } from "./keys.ts";

export class RedisPubSub implements PubSub {
  private readonly handlers = new Map<string, Set<PubSubHandler>>();

  constructor(
    private readonly pub: Redis,
    private readonly sub: Redis,
    private readonly keys: Keys,
  ) {
    sub.on("messageBuffer", (channel: Buffer, message: Buffer) => {
      const set = this.handlers.get(channel.toString());
      if (set) for (const h of set) h(message);
    });
  }

  async publish(channel: string, payload: Buffer | string): Promise<void> {
    await this.pub.publish(this.keys.channel(channel), payload);
  }

  async subscribe(channel: string, handler: PubSubHandler): Promise<() => Promise<void>> {
    const full = this.keys.channel(channel);
    let set = this.handlers.get(full);
    if (!set) {
      set = new Set();
      this.handlers.set(full, set);
      await this.sub.subscribe(full);
    }
    set.add(handler);
    return async () => {
      set.delete(handler);
      if (set.size === 0 && this.handlers.get(full) === set) {
        this.handlers.delete(full);
        await this.sub.unsubscribe(full);
      }
    };
  }
}
