// The embedded default: every engine in process.
import { type CacheLifetimes, DEFAULT_CACHE_LIFETIMES } from "../../retention/cache-lifetimes.ts";
import type { Engines } from "../engines.ts";
import { MemoryLimits } from "./limits.ts";
import { MemoryPresence } from "./presence.ts";
import { MemoryStreamCursors } from "./stream-cursors.ts";
import { MemoryPubSub } from "./pubsub.ts";
import { MemoryStreamLog } from "./stream-log.ts";
import { MemoryFeed } from "./feed.ts";
import { MemoryMoments } from "./moments.ts";
import { MemoryNodes } from "./nodes.ts";
import { MemoryTickets } from "./tickets.ts";
import { MemoryWebhookJobs } from "./webhook-jobs.ts";

/** `now`: the node's clock (stream logs expire on it). */
export function createMemoryEngines(
  now: () => number = Date.now,
  lifetimes: CacheLifetimes = DEFAULT_CACHE_LIFETIMES,
): Engines {
  const pubsub = new MemoryPubSub();
  const moments = new MemoryMoments();
  return {
    kind: "memory",
    limits: new MemoryLimits(),
    pubsub,
    presence: new MemoryPresence(),
    streams: new MemoryStreamLog(pubsub, now, lifetimes.streamLogIdleMs),
    streamCursors: new MemoryStreamCursors(),
    feed: new MemoryFeed({ moments }),
    moments,
    nodes: new MemoryNodes(),
    tickets: new MemoryTickets(),
    webhookJobs: new MemoryWebhookJobs(now),
    async ping() {},
    pendingCommands: () => 0,
    async close() {},
  };
}
