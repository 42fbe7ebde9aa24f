// The embedded default: every engine in process.
import type { Engines } from "../engines.ts";
import { MemoryLimits } from "./limits.ts";
import { MemoryPresence } from "./presence.ts";
import { MemoryGroupCursors } from "./group-cursors.ts";
import { MemoryPubSub } from "./pubsub.ts";
import { MemoryFeed } from "./feed.ts";
import { MemoryMoments } from "./moments.ts";
import { MemoryInFlight, MemoryNodes } from "./nodes.ts";

export function createMemoryEngines(): Engines {
  const pubsub = new MemoryPubSub();
  const moments = new MemoryMoments();
  const nodes = new MemoryNodes();
  return {
    kind: "memory",
    limits: new MemoryLimits(),
    pubsub,
    presence: new MemoryPresence(),
    groupCursors: new MemoryGroupCursors(),
    feed: new MemoryFeed({ moments }),
    moments,
    nodes,
    inflight: new MemoryInFlight(nodes),
    async ping() {},
    async close() {},
  };
}
