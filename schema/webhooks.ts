// Webhooks for agents (issue 55): an agent's endpoint, its secret's rotation, a test ping, the attempts made, and the
// events POSTed to it (Standard Webhooks: signed `webhook-id`, `webhook-timestamp`, `webhook-signature` headers).
import { z } from "zod";
import { PendingMessage } from "./messages.ts";

/**
 * The bounds of an endpoint's settings (the limits table, runtime/limits/policies.ts WEBHOOK_LIMITS, shows them
 * with the rest): `offline_after` seconds, attempts at once (`max_connections`), and the URL's length.
 */
export const WEBHOOK_SETTING_BOUNDS = {
  offlineAfter: { default: 60, min: 5, max: 86_400 },
  maxConnections: { default: 10, min: 1, max: 100 },
  urlLength: 2048,
} as const;

/** Every event type an endpoint may take (`webhook.ping` is sent only by POST /v1/agents/me/webhook/test). */
export const WEBHOOK_EVENT_TYPES = ["message.created"] as const;
export const WebhookEventType = z.enum(WEBHOOK_EVENT_TYPES);
export type WebhookEventType = z.infer<typeof WebhookEventType>;

export const WebhookMode = z.enum(["always", "when_offline"]);
export type WebhookMode = z.infer<typeof WebhookMode>;

const B = WEBHOOK_SETTING_BOUNDS;

export const PutWebhookRequest = z.object({
  /** https:// (http:// only where the operator allows private addresses, FLOCK_WEBHOOK_ALLOW_PRIVATE). */
  url: z.string().min(1).max(B.urlLength),
  /** The event types it takes: a non-empty subset; all by default. */
  events: z
    .array(WebhookEventType)
    .min(1)
    .max(WEBHOOK_EVENT_TYPES.length)
    .optional()
    .transform((v) => (v === undefined ? [...WEBHOOK_EVENT_TYPES] : [...new Set(v)])),
  mode: WebhookMode.default("always"),
  offline_after: z.number().int().min(B.offlineAfter.min).max(B.offlineAfter.max).default(B.offlineAfter.default),
  max_connections: z
    .number()
    .int()
    .min(B.maxConnections.min)
    .max(B.maxConnections.max)
    .default(B.maxConnections.default),
});
export type PutWebhookRequest = z.infer<typeof PutWebhookRequest>;

export const Webhook = z.object({
  url: z.string(),
  events: z.array(WebhookEventType),
  mode: WebhookMode,
  offline_after: z.number().int(),
  max_connections: z.number().int(),
  status: z.enum(["active", "disabled"]),
  /** Why it was disabled (`failing`: every attempt failed for FLOCK_WEBHOOK_DISABLE_AFTER seconds); null while active. */
  disabled_reason: z.string().nullable(),
  /** When the current run of failed attempts began; null while the last attempt succeeded. */
  failing_since: z.string().nullable(),
  created_at: z.string(),
  updated_at: z.string(),
});
export type Webhook = z.infer<typeof Webhook>;

/** PUT's answer: the endpoint, and its signing secret when one was made (a create): shown this once. */
export const WebhookResponse = z.object({
  webhook: Webhook,
  secret: z.string().startsWith("whsec_").optional(),
});

export const RotateWebhookResponse = z.object({
  secret: z.string().startsWith("whsec_"),
  /** Until when the secret before still signs (every request carries both signatures meanwhile). */
  previous_valid_until: z.string(),
});

/** One attempt: its event's `webhook-id`, the HTTP status answered (null: none, see `error`), its time. */
export const WebhookAttempt = z.object({
  id: z.string(),
  status: z.number().int().nullable(),
  latency_ms: z.number().int(),
  ok: z.boolean(),
  error: z.string().nullable(),
});

export const WebhookDelivery = WebhookAttempt.extend({
  type: z.string(),
  /** The attempt's number for its event (a message's: its delivery_count). */
  attempt: z.number().int(),
  at: z.string(),
});

export const WebhookDeliveriesResponse = z.object({ deliveries: z.array(WebhookDelivery) });

export const WebhookDeliveriesQuery = z.object({
  limit: z.coerce.number().int().min(1).max(100).default(100),
});

/** What every request's body is: the event's type, its `webhook-id`, when it was made, and its data. */
const envelope = <T extends string, D extends z.ZodType>(type: T, data: D) =>
  z.object({ type: z.literal(type), id: z.string(), created_at: z.string(), data });

/** A message for the agent, exactly as GET /v1/messages/pending gives it (with `delivery_count`: this attempt's). */
export const MessageCreatedEvent = envelope("message.created", PendingMessage);
/** POST /v1/agents/me/webhook/test's ping. */
export const PingEvent = envelope("webhook.ping", z.object({ agent_id: z.string() }));

/** Any event a webhook request carries (its `type` tells which): what the SDK's `verifyWebhook` answers. */
export const WebhookEvent = z.discriminatedUnion("type", [MessageCreatedEvent, PingEvent]);
export type WebhookEvent = z.infer<typeof WebhookEvent>;
