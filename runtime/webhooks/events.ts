// The events POSTed to endpoints, as the JSON text each request carries: `{"type", "id", "created_at", "data"}`
// (schema/webhooks.ts). A message's event id is its own (`msg_<id>`), the same on every attempt, so a receiver
// deduplicates by `webhook-id`.
import { idTime } from "../ids.ts";
import { withDeliveryCount } from "../messaging/payload.ts";

export interface WebhookEvent {
  /** The `webhook-id`. */
  id: string;
  type: string;
  /** The request's body. */
  body: string;
}

/** A message for the agent, as GET /v1/messages/pending gives it, this attempt counted in its delivery_count. */
export function messageEvent(e: { id: string; payload: string; deliveryCount: number }): WebhookEvent {
  const id = `msg_${e.id}`;
  const at = new Date(idTime(BigInt(e.id))).toISOString();
  const data = withDeliveryCount(e.payload, e.deliveryCount);
  return {
    id,
    type: "message.created",
    body: `{"type":"message.created","id":${JSON.stringify(id)},"created_at":"${at}","data":${data}}`,
  };
}

/** POST /v1/agents/me/webhook/test's ping. */
export function pingEvent(id: string, agent: string, at: number): WebhookEvent {
  const body = { type: "webhook.ping", id, created_at: new Date(at).toISOString(), data: { agent_id: agent } };
  return { id, type: "webhook.ping", body: JSON.stringify(body) };
}
