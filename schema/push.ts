// Web Push for people (docs/ARCHITECTURE.md, "Web Push"): the browser's PushSubscription as the web app posts it, the
// removal of one, the server's VAPID key, and the payload each push carries (what the service worker shows).
import { z } from "zod";

/** How long an endpoint URL may be (the push services' own are under 500 characters). */
export const MAX_ENDPOINT_LENGTH = 2048;

/** Unpadded base64url (padding is accepted and ignored): what PushSubscription.toJSON() writes its keys in. */
const base64url = (bytes: number, what: string) =>
  z
    .string()
    .max(200)
    .regex(/^[A-Za-z0-9_-]+={0,2}$/, `${what} must be base64url`)
    .refine((s) => Buffer.from(s, "base64url").length === bytes, `${what} must be ${bytes} bytes`);

const endpoint = z
  .string()
  .max(MAX_ENDPOINT_LENGTH)
  .refine((u) => URL.canParse(u) && /^https?:\/\//i.test(u), "must be an https:// URL");

/** `POST /v1/users/me/push-subscriptions`: a browser's PushSubscription JSON (`expirationTime` is accepted and unused). */
export const PushSubscriptionRequest = z.object({
  endpoint,
  expirationTime: z.number().nullable().optional(),
  keys: z.object({
    /** The browser's P-256 public key, uncompressed (65 bytes, 0x04 first). */
    p256dh: base64url(65, "keys.p256dh").refine(
      (s) => Buffer.from(s, "base64url")[0] === 4,
      "keys.p256dh must be an uncompressed P-256 point",
    ),
    /** The browser's 16-byte authentication secret. */
    auth: base64url(16, "keys.auth"),
  }),
});
export type PushSubscriptionRequest = z.infer<typeof PushSubscriptionRequest>;

/** `DELETE /v1/users/me/push-subscriptions`: the endpoint to stop pushing to. */
export const PushUnsubscribeRequest = z.object({ endpoint });

/** `GET /v1/push/key`: the VAPID public key (base64url, uncompressed P-256), the `applicationServerKey` to subscribe with. */
export const PushKeyResponse = z.object({ public_key: z.string() });

/** The subscription as the server keeps it. */
export const PushSubscriptionResponse = z.object({ endpoint: z.string(), created_at: z.string() });

/** What one push carries, as JSON (encrypted to the subscription): the service worker shows it and opens `url` on a click. */
export const PushPayload = z.object({
  type: z.enum(["message", "friend_request"]),
  title: z.string(),
  body: z.string(),
  /** The web app's route: `#/chat/t/<thread>` for a message, `#/friends` for a friend request. */
  url: z.string(),
  /** The message's thread; null for a friend request. */
  thread_id: z.string().nullable(),
  /** The person's unread messages over all their threads, as the badge shows it. */
  unread: z.number().int().min(0),
});
export type PushPayload = z.infer<typeof PushPayload>;
