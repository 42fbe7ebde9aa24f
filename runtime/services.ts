// What handlers may use: the shared services of one node, every per-node part built by startNode
// (runtime/server.ts, runtime/node.ts) in the order docs/ARCHITECTURE.md states.
import type { HTTPFacilitatorClient } from "@x402/core/http";
import type { PublicClient } from "viem";
import type { Authenticator } from "./auth.ts";
import type { Announcer } from "./events/announcer.ts";
import type { Circuits } from "./circuit.ts";
import type { CacheRepair } from "./social/cache-repair.ts";
import type { Config } from "./config.ts";
import type { Sql } from "./db/client.ts";
import type { Engines } from "./engines/engines.ts";
import type { BlobStore } from "./files/store.ts";
import type { IdGenerator } from "./ids.ts";
import type { Limiter } from "./limits/limiter.ts";
import type { Logger } from "./log.ts";
import type { Messaging } from "./messaging/hub.ts";
import type { PollPresence } from "./messaging/poll-presence.ts";
import type { Metrics } from "./metrics.ts";
import type { AssetTable } from "./payments/assets.ts";
import type { PaidAgents } from "./payments/terms.ts";
import type { ProviderKeys } from "./signin/privy.ts";
import type { Likes } from "./social/likes.ts";
import type { RelationsCache } from "./social/blocks.ts";
import type { Realtime } from "./ws/realtime.ts";
import type { EventStreams } from "./ws/event-streams.ts";
import type { McpSessions } from "./mcp/sessions.ts";
import type { SelfAddress } from "./self-address.ts";
import type { Horizons } from "./retention/horizons.ts";
import type { Tracing } from "./tracing.ts";
import type { SearchGate } from "./search/bounded.ts";
import type { SlowRequests } from "./http/slow-requests.ts";
import type { WebPush } from "./push/index.ts";
import type { WebhookDispatcher } from "./webhooks/dispatcher.ts";

/** The backends and the node's identity: what the parts below are built from. */
export interface Core {
  config: Config;
  log: Logger;
  sql: Sql;
  engines: Engines;
  ids: IdGenerator;
  auth: Authenticator;
  limiter: Limiter;
  /** One per backing server: open while it is out of reach (runtime/circuit.ts). */
  circuits: Circuits;
  /** The clock every time-dependent decision reads (tests may replace it). */
  now: () => number;
  /** Where retention cuts messages and moments off: every read stops there (runtime/retention/horizons.ts). */
  horizons: Horizons;
  /** What the node counts and times for Prometheus (runtime/metrics.ts); /metrics serves it. */
  metrics: Metrics;
  /** The spans of sends, when OTEL_EXPORTER_OTLP_ENDPOINT is set (runtime/tracing.ts); undefined when tracing is off. */
  tracing?: Tracing;
  /** Tells every node's connections of presence, typing, reads, friend requests, friendships (events/announcer.ts). */
  announce: Announcer;
}

export interface Services extends Core {
  /** Where uploaded files' bytes live (runtime/files/). */
  files: BlobStore;
  /** The identity provider's token verification key, null when provider login is not configured (runtime/signin/privy.ts). */
  providerKeys: ProviderKeys | null;
  /** The chain that verifies smart-wallet sign-ins, null without FLOCK_CHAIN_RPC_URL (runtime/signin/wallet.ts). */
  chain: PublicClient | null;
  /** The x402 facilitator, null without FACILITATOR_URL (runtime/payments/facilitator.ts). */
  facilitator: HTTPFacilitatorClient | null;
  /** The networks this node settles on (runtime/payments/assets.ts). */
  assets: AssetTable;
  /** Paid agents' terms, cached (runtime/payments/terms.ts). */
  paidAgents: PaidAgents;
  /** Each principal's blocks either way and mutes, cached (runtime/social/blocks.ts). */
  relations: RelationsCache;
  /** The like batcher (runtime/social/likes.ts). */
  likes: Likes;
  /** Cache writes that failed after a commit, retried until Redis takes them (runtime/social/cache-repair.ts). */
  cacheRepair: CacheRepair;
  /** Sends, streams, long polls and acks (runtime/messaging/hub.ts). */
  hub: Messaging;
  /** Long-polling principals online: one presence entry each on this node (runtime/messaging/poll-presence.ts). */
  pollPresence: PollPresence;
  /** Presence, typing and the other events relayed to this node's WebSocket connections (runtime/ws/realtime.ts). */
  realtime: Realtime;
  /** The node's Server-Sent Events streams (GET /v1/events; runtime/ws/event-streams.ts). */
  events: EventStreams;
  /** Web Push to people whose pages are closed: VAPID keys, who holds subscriptions, the pushes (runtime/push/). */
  push: WebPush;
  /** Agents' webhook deliveries: the jobs this node holds, the announcements, the sweep (runtime/webhooks/). */
  webhooks: WebhookDispatcher;
  /** The node's MCP sessions over streamable HTTP (/v1/mcp; runtime/mcp/sessions.ts). */
  mcp: McpSessions;
  /** Where the node reaches its own API over loopback; set by the listen step. */
  self: SelfAddress;
  /** How many searches run at once, and each one's statement bound (runtime/search/bounded.ts). */
  search: SearchGate;
  /** Requests that held the event loop or ran a statement past its bound, logged and counted (runtime/http/slow-requests.ts). */
  slow: SlowRequests;
}
