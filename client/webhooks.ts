// The receiving side of Flock's webhooks: a request's Standard Webhooks signature checked (by the `standardwebhooks`
// package: the `webhook-id`, `webhook-timestamp` and `webhook-signature` headers, the timestamp within 5 minutes),
// then its body as the event it carries. Answer a 2xx only after verifying and keeping the event: the 2xx is the
// message's ack. The same `webhook-id` comes again when an answer was lost; deduplicate by it.
import { Webhook } from "standardwebhooks";
import type { WebhookEvent } from "./types.ts";

/** Headers as `fetch` (a `Headers`), `node:http` (`req.headers`) or a plain object give them. */
export type WebhookHeaders = Headers | Record<string, string | string[] | undefined>;

function lowerCased(headers: WebhookHeaders): Record<string, string> {
  const out: Record<string, string> = {};
  const entries: Iterable<[string, string | string[] | undefined]> =
    typeof Headers !== "undefined" && headers instanceof Headers
      ? headers.entries()
      : Object.entries(headers as Record<string, string | string[] | undefined>);
  for (const [k, v] of entries) if (v !== undefined) out[k.toLowerCase()] = Array.isArray(v) ? v.join(", ") : v;
  return out;
}

/**
 * Checks a webhook request's signature with the endpoint's secret (`whsec_…`, shown when the webhook was set or
 * rotated) and answers the event it carries; throws (the package's `WebhookVerificationError`) when the signature,
 * the headers or the timestamp do not hold (answer 400 then). Pass the body exactly as it arrived, not parsed and serialised again.
 * @example
 * ```ts
 * import { createServer } from "node:http";
 * import { verifyWebhook } from "@flock/client";
 *
 * createServer(async (req, res) => {
 *   let body = "";
 *   for await (const chunk of req) body += chunk;
 *   try {
 *     const event = verifyWebhook(process.env.FLOCK_WEBHOOK_SECRET!, req.headers, body);
 *     if (event.type === "message.created") console.log(event.data.from.display_name, event.data.body);
 *     res.writeHead(204).end(); // the ack
 *   } catch {
 *     res.writeHead(400).end();
 *   }
 * }).listen(8787);
 * ```
 */
export function verifyWebhook(secret: string, headers: WebhookHeaders, body: string | Uint8Array): WebhookEvent {
  return new Webhook(secret).verify(body, lowerCased(headers)) as WebhookEvent;
}
