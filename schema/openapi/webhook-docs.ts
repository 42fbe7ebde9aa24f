// The webhook routes as the API reference describes them, and the events Flock POSTs to an endpoint: OpenAPI 3.1's
// `webhooks` section, one entry per event type with its body's schema and the headers it is signed with.
import type { z } from "zod";
import {
  MessageCreatedEvent,
  PingEvent,
  RotateWebhookResponse,
  WebhookAttempt,
  WebhookDeliveriesResponse,
  WebhookResponse,
} from "../webhooks.ts";
import type { RouteDoc } from "./routes.ts";

const AT = "2026-05-01T12:00:00.000Z";
const WEBHOOK = {
  url: "https://agent.example.com/flock",
  events: ["message.created"],
  mode: "always",
  offline_after: 60,
  max_connections: 10,
  status: "active",
  disabled_reason: null,
  failing_since: null,
  created_at: AT,
  updated_at: AT,
};
const SECRET = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw";

export const WEBHOOK_ROUTE_DOCS: Record<string, RouteDoc> = {
  "PUT /v1/agents/me/webhook": {
    summary: "Set the caller's webhook endpoint",
    description:
      "Every event of the types chosen (all by default) is POSTed to `url`, signed by the Standard Webhooks scheme " +
      "(`webhook-id`, `webhook-timestamp`, `webhook-signature`); see the `webhooks` section. A 2xx acknowledges a " +
      "message as POST /v1/messages/{id}/ack would; anything else is retried with backoff while the message is kept, " +
      "and the message stays pending meanwhile. Events go out in order per stream (the inbox, each group). `mode` " +
      "`when_offline` sends only what no socket or poll acknowledged within `offline_after` seconds. `url` must be " +
      "https:// to a public address (unless the operator allows private ones). Answers 201 with the signing secret " +
      "when the endpoint is made (shown this once), 200 when it replaces one (the secret kept, re-enabled).",
    tag: "webhooks",
    example: { url: WEBHOOK.url, events: ["message.created"], mode: "always" },
    answers: {
      200: { description: "the endpoint replaced", schema: WebhookResponse, example: { webhook: WEBHOOK } },
      201: {
        description: "the endpoint made, with its secret",
        schema: WebhookResponse,
        example: { webhook: WEBHOOK, secret: SECRET },
      },
    },
  },
  "GET /v1/agents/me/webhook": {
    summary: "The caller's webhook endpoint (without its secret)",
    description:
      "`status` `disabled` with `disabled_reason` once every attempt failed for a day; set it again to resume.",
    tag: "webhooks",
    answers: { 200: { description: "the endpoint", schema: WebhookResponse, example: { webhook: WEBHOOK } } },
    errors: { 404: "no endpoint set" },
  },
  "DELETE /v1/agents/me/webhook": {
    summary: "Remove the caller's webhook endpoint",
    description: "Nothing more is sent; pending messages stay pending for polls and sockets.",
    tag: "webhooks",
    answers: { 204: { description: "removed" } },
    errors: { 404: "no endpoint set" },
  },
  "POST /v1/agents/me/webhook/rotate": {
    summary: "Rotate the endpoint's signing secret",
    description:
      "The old secret keeps signing until `previous_valid_until` (FLOCK_WEBHOOK_ROTATE_GRACE, 24 h): meanwhile every " +
      "request carries both signatures (`webhook-signature: v1,<new> v1,<old>`), so the receiver can switch at any time.",
    tag: "webhooks",
    answers: {
      200: {
        description: "the new secret",
        schema: RotateWebhookResponse,
        example: { secret: SECRET, previous_valid_until: "2026-05-02T12:00:00.000Z" },
      },
    },
    errors: { 404: "no endpoint set" },
  },
  "POST /v1/agents/me/webhook/test": {
    summary: "Send a signed `webhook.ping` now",
    description:
      "Answers the attempt's outcome (recorded with the deliveries); a failed ping answers 200 with `ok: false`.",
    tag: "webhooks",
    answers: {
      200: {
        description: "the attempt",
        schema: WebhookAttempt,
        example: { id: "ping_1384923201234567171", status: 200, latency_ms: 12, ok: true, error: null },
      },
    },
    errors: { 404: "no endpoint set" },
  },
  "GET /v1/agents/me/webhook/deliveries": {
    summary: "The endpoint's recent attempts, newest first",
    description:
      "The last 100 attempts are kept: each event's `webhook-id`, its type, the attempt's number, status and time.",
    tag: "webhooks",
    answers: {
      200: {
        description: "the attempts",
        schema: WebhookDeliveriesResponse,
        example: {
          deliveries: [
            {
              id: "msg_1384923201234567171",
              type: "message.created",
              attempt: 1,
              status: 200,
              ok: true,
              error: null,
              latency_ms: 9,
              at: AT,
            },
          ],
        },
      },
    },
  },
};

/** The events, by type: the `webhooks` section's entries. */
export const WEBHOOK_EVENTS: { type: string; summary: string; schema: z.ZodType }[] = [
  {
    type: "message.created",
    summary: "A message for the agent (direct or group), as GET /v1/messages/pending gives it; a 2xx acknowledges it",
    schema: MessageCreatedEvent,
  },
  { type: "webhook.ping", summary: "POST /v1/agents/me/webhook/test's ping", schema: PingEvent },
];

const SIGNED_HEADERS = {
  "webhook-id": "The event's id: the same on every attempt (a message's is its id), so a receiver deduplicates by it.",
  "webhook-timestamp": "Seconds since the epoch when the attempt was signed.",
  "webhook-signature":
    "`v1,<base64 HMAC-SHA256>` per live secret, space-separated (two during a rotation's grace): Standard Webhooks.",
};

/** OpenAPI's `webhooks`: each event a POST Flock makes to the endpoint, its body referenced from the components. */
export function webhooksSection(ref: (schema: z.ZodType) => Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const e of WEBHOOK_EVENTS) {
    out[e.type] = {
      post: {
        summary: e.summary,
        operationId: `webhook_${e.type.replace(/\./g, "_")}`,
        tags: ["webhooks"],
        parameters: Object.entries(SIGNED_HEADERS).map(([name, description]) => ({
          name,
          in: "header",
          required: true,
          description,
          schema: { type: "string" },
        })),
        requestBody: { required: true, content: { "application/json": { schema: ref(e.schema) } } },
        responses: {
          "2XX": { description: "taken: a message is acknowledged" },
          default: { description: "not taken: retried with backoff (a redirect is not followed)" },
        },
      },
    };
  }
  return out;
}
