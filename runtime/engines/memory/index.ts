// The embedded default: every engine in process.
import type { Engines } from "../engines.ts";
import { MemoryLimits } from "./limits.ts";
import { MemoryPubSub } from "./pubsub.ts";

export function createMemoryEngines(): Engines {
  return {
    kind: "memory",
    limits: new MemoryLimits(),
    pubsub: new MemoryPubSub(),
    async allocateNodeId() {
      return 0;
    },
    async ping() {},
    async close() {},
  };
}
