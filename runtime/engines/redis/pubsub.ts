// Redis pub/sub: one subscriber connection per node whatever the number of channels or listeners. Every channel
// (messages, membership, presence, typing, friendship, bans, cache invalidation) uses PUBLISH, which a cluster carries
// to every node.
import type { Cluster, Redis } from "ioredis";
import type { PubSub, PubSubHandler } from "../pubsub.ts";
import type { Keys } from "./keys.ts";

type RedisClient = Redis | Cluster;

export class RedisPubSub implements PubSub {
  private readonly handlers = new Map<string, Set<PubSubHandler>>();

  constructor(
    private readonly pub: RedisClient,
    private readonly sub: RedisClient,
    private readonly keys: Keys,
  ) {
    const deliver = (channel: Buffer, message: Buffer) => {
      const set = this.handlers.get(channel.toString());
      if (set) for (const h of set) h(message);
    };
    sub.on("messageBuffer", deliver);
  }

  async publish(channel: string, payload: Buffer | string): Promise<void> {
    await this.pub.publish(this.keys.channel(channel), payload);
  }

  subscribe(channel: string, handler: PubSubHandler): Promise<() => Promise<void>> {
    return this.listen(this.keys.channel(channel), handler);
  }

  private async listen(full: string, handler: PubSubHandler): Promise<() => Promise<void>> {
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
