import { Redis } from "ioredis";
import t from "tap";
import { MemoryMailboxes } from "../runtime/engines/memory/mailbox.ts";
import { MemoryPubSub } from "../runtime/engines/memory/pubsub.ts";
import { redisKeys } from "../runtime/engines/redis/keys.ts";
import { RedisMailboxes } from "../runtime/engines/redis/mailbox.ts";
import { RedisPubSub } from "../runtime/engines/redis/pubsub.ts";
import { defineScripts } from "../runtime/engines/redis/scripts.ts";
import { TEST_REDIS_URL, uniqueName } from "./helpers/env.ts";
import { deletePrefix } from "./helpers/node.ts";
import { CONTRACT_CAPACITY, mailboxContract } from "./mailbox-engine.contract.ts";

t.test("memory engine", async (t) => {
  mailboxContract(t, async () => ({
    engine: new MemoryMailboxes(new MemoryPubSub(), CONTRACT_CAPACITY),
    close: async () => {},
  }));
});

t.test("redis engine", async (t) => {
  mailboxContract(t, async () => {
    const prefix = `flocktest:${uniqueName("mb")}:`;
    const cmd = new Redis(TEST_REDIS_URL);
    const sub = new Redis(TEST_REDIS_URL);
    const keys = redisKeys(prefix);
    const engine = new RedisMailboxes(defineScripts(cmd), keys, new RedisPubSub(cmd, sub, keys), {
      capacity: CONTRACT_CAPACITY,
    });
    return {
      engine,
      close: async () => {
        cmd.disconnect();
        sub.disconnect();
        await deletePrefix(prefix);
      },
    };
  });
});
