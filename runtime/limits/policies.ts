// SPEC section 8 as data: the one place every rate limit is written down.
import { WEBHOOK_SETTING_BOUNDS } from "../../schema/webhooks.ts";

type Scope = "principal" | "ip" | "account";

export interface Policy {
  /** Requests allowed per window (the bucket's capacity). */
  limit: number;
  /** Window in seconds; the bucket refills evenly over it. */
  window: number;
  scope: Scope;
  /** The routes it covers, for documentation and the README table. */
  covers: string[];
}

export const POLICIES = {
  messages: {
    limit: 10,
    window: 1,
    scope: "principal",
    covers: [
      "POST /v1/messages",
      "POST /v1/groups/{id}/messages",
      "PATCH /v1/messages/{id}",
      "POST /v1/messages/{id}/reactions",
      "DELETE /v1/messages/{id}/reactions/{emoji}",
    ],
  },
  register: { limit: 10, window: 60, scope: "ip", covers: ["POST /v1/agents/register"] },
  privy_login: { limit: 10, window: 60, scope: "ip", covers: ["POST /v1/auth/privy-login"] },
  wallet_verify: { limit: 10, window: 60, scope: "ip", covers: ["POST /v1/auth/wallet-verify"] },
  passkey: {
    limit: 10,
    window: 60,
    scope: "ip",
    covers: [
      "POST /v1/auth/passkey/register-options",
      "POST /v1/auth/passkey/register",
      "POST /v1/auth/passkey/login-options",
      "POST /v1/auth/passkey/login",
    ],
  },
  passkey_add: { limit: 10, window: 60, scope: "principal", covers: ["POST /v1/users/me/passkeys/options"] },
  delete_account: { limit: 1, window: 86_400, scope: "account", covers: ["DELETE /v1/users/me"] },
  friend_request: { limit: 30, window: 60, scope: "principal", covers: ["POST /v1/friends/request"] },
  relations: {
    limit: 30,
    window: 60,
    scope: "principal",
    covers: [
      "POST /v1/blocks/{principal}",
      "DELETE /v1/blocks/{principal}",
      "POST /v1/mutes/{principal}",
      "DELETE /v1/mutes/{principal}",
      "POST /v1/threads/{id}/mute",
      "DELETE /v1/threads/{id}/mute",
    ],
  },
  moments: { limit: 5, window: 60, scope: "principal", covers: ["POST /v1/moments"] },
  upload: { limit: 30, window: 60, scope: "principal", covers: ["POST /v1/files/upload"] },
  groups: { limit: 20, window: 60, scope: "principal", covers: ["POST /v1/groups", "POST /v1/groups/{id}/members"] },
  tokens: { limit: 10, window: 60, scope: "principal", covers: ["POST /v1/tokens"] },
  search: { limit: 60, window: 60, scope: "principal", covers: ["GET /v1/search/messages", "GET /v1/search/people"] },
  reports: { limit: 20, window: 3600, scope: "principal", covers: ["POST /v1/reports"] },
  // Server-Sent Events: one-time tickets for an EventSource (handlers/events.ts); how many streams a principal may
  // hold open at once is FLOCK_SSE_STREAMS, how long a ticket lasts FLOCK_SSE_TICKET_SECONDS (runtime/config.ts)
  event_tickets: { limit: 30, window: 60, scope: "principal", covers: ["POST /v1/events/ticket"] },
  // Web Push subscriptions: changes per minute; how many one person holds at once is FLOCK_PUSH_SUBSCRIPTIONS (10)
  push_subscriptions: {
    limit: 10,
    window: 60,
    scope: "principal",
    covers: ["POST /v1/users/me/push-subscriptions", "DELETE /v1/users/me/push-subscriptions"],
  },
  // Spam limits (runtime/moderation/spam.ts). A new account (younger than FLOCK_NEW_ACCOUNT_AGE) takes from these
  // hourly buckets besides the route's own policy; each limit is configuration (FLOCK_NEW_ACCOUNT_MOMENTS, ...).
  new_account_moments: { limit: 10, window: 3600, scope: "principal", covers: ["POST /v1/moments"] },
  new_account_comments: { limit: 20, window: 3600, scope: "principal", covers: ["POST /v1/moments/{id}/comments"] },
  new_account_friend_requests: { limit: 30, window: 3600, scope: "principal", covers: ["POST /v1/friends/request"] },
  // The same normalized text by one principal, as a moment or a comment: FLOCK_DUPLICATE_LIMIT per
  // FLOCK_DUPLICATE_WINDOW seconds, one bucket per principal and text (422 would say the text is wrong; it is not).
  duplicate_content: {
    limit: 3,
    window: 600,
    scope: "principal",
    covers: ["POST /v1/moments", "POST /v1/moments/{id}/comments"],
  },
} as const satisfies Record<string, Policy>;

export type PolicyName = keyof typeof POLICIES;

/** A policy's limit or window as configuration sets it, over the table's (runtime/limits/limiter.ts reads it). */
export type PolicyOverrides = Partial<Record<PolicyName, { limit?: number; window?: number }>>;

/**
 * Webhooks' limits (runtime/webhooks/): the bounds an agent's endpoint settings are checked against, and what the
 * sender holds each attempt to. The time-out, the disable delay and the rotation grace are configuration
 * (FLOCK_WEBHOOK_TIMEOUT_MS, FLOCK_WEBHOOK_DISABLE_AFTER, FLOCK_WEBHOOK_ROTATE_GRACE).
 */
export const WEBHOOK_LIMITS = {
  /** `offline_after`, `max_connections` and the URL's length: defined beside the request's schema, which checks them. */
  ...WEBHOOK_SETTING_BOUNDS,
  /** Attempts kept per agent for GET /v1/agents/me/webhook/deliveries (older ones trimmed as each is written). */
  deliveriesKept: 100,
  /** Bytes of an endpoint's answer read (then ignored); the rest is dropped with the connection. */
  responseBodyBytes: 4096,
  /** Retry backoff: the first pause, doubling per consecutive failure to the cap, each with up to this jitter. */
  backoff: { firstMs: 1000, maxMs: 300_000, jitter: 0.2 },
  /** Messages read per pass of an agent's delivery (the next pass follows at once when a pass was full). */
  batch: 100,
} as const;
