// The set of engines a node runs on: all Redis-backed ones, or all in-process ones.
import type { FeedCache } from "./feed.ts";
import type { LimitsEngine } from "./limits.ts";
import type { MomentCache } from "./moments.ts";
import type { NodeRegistry } from "./nodes.ts";
import type { PresenceEngine } from "./presence.ts";
import type { StreamCursorCache } from "./stream-cursors.ts";
import type { PubSub } from "./pubsub.ts";
import type { StreamLog } from "./stream-log.ts";
import type { TicketEngine } from "./tickets.ts";
import type { WebhookJobs } from "./webhook-jobs.ts";

/** Every engine call answers or fails within this (Redis: the clients' command timeout, engines/redis/index.ts). */
export const COMMAND_TIMEOUT_MS = 1000;

export interface Engines {
  readonly kind: "redis" | "memory";
  readonly limits: LimitsEngine;
  readonly pubsub: PubSub;
  readonly presence: PresenceEngine;
  /** The recent messages of every inbox and group, appended and announced in one step (the live path). */
  readonly streams: StreamLog;
  /** Members' cursors in their inboxes and groups, remembered after Postgres took each ack (read while Postgres is away). */
  readonly streamCursors: StreamCursorCache;
  readonly feed: FeedCache;
  /** Cached moment records, so warm feed reads need no Postgres. */
  readonly moments: MomentCache;
  /** Agents' webhook delivery jobs, each held by one node (runtime/webhooks/dispatcher.ts). */
  readonly webhookJobs: WebhookJobs;
  /** Node id leases (distinct among live nodes sharing the engine). */
  readonly nodes: NodeRegistry;
  /** One-time tickets (an EventSource's stand-in for its token: handlers/events.ts). */
  readonly tickets: TicketEngine;
  /** Health check: resolves when the backing store answers. */
  ping(): Promise<void>;
  /** Commands sent on the command connection and not answered yet (0 in process); read when scraped. */
  pendingCommands(): number;
  close(): Promise<void>;
}

export type { FeedCache, MomentCache, NodeRegistry, PresenceEngine };
