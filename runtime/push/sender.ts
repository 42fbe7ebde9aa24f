// Sending one push (RFC 8030): web-push builds the request (the RFC 8291 aes128gcm body encrypted to the subscription's
// keys, and the RFC 8292 VAPID `Authorization: vapid t=<JWT>,k=<key>` header) and node:http(s) sends it, to an address
// checked and pinned (runtime/net/pinned-post.ts, as webhooks are sent), redirects not followed, within
// SEND_TIMEOUT_MS, its answer's body read no further than RESPONSE_BODY_CAP and ignored. What the push service answered is the status.
import webpush from "web-push";
import { pinnedPost } from "../net/pinned-post.ts";
import type { Vapid } from "./vapid.ts";

/** A push service that has not answered in this long has failed this push. */
const SEND_TIMEOUT_MS = 10_000;
/** Bytes of a push service's answer read before the connection is dropped (the body says nothing we use). */
const RESPONSE_BODY_CAP = 16 * 1024;

export interface PushTarget {
  endpoint: string;
  keys: { p256dh: string; auth: string };
}

export interface PushOptions {
  /** Seconds the push service keeps the push for a browser that is offline (RFC 8030 TTL). */
  ttl: number;
  urgency: "very-low" | "low" | "normal" | "high";
  /** Pushes under one topic replace each other while undelivered (RFC 8030 Topic; base64url, at most 32 characters). */
  topic?: string;
}

/** Sends one encrypted push; answers the push service's status (201 taken; 404 and 410: the subscription is gone). */
export interface PushSender {
  send(target: PushTarget, payload: string, opts: PushOptions): Promise<number>;
}

export class HttpPushSender implements PushSender {
  constructor(
    private readonly vapid: Vapid,
    private readonly allowPrivate: boolean,
    private readonly timeoutMs = SEND_TIMEOUT_MS,
  ) {}

  async send(target: PushTarget, payload: string, opts: PushOptions): Promise<number> {
    const details = webpush.generateRequestDetails(target, payload, {
      vapidDetails: { subject: this.vapid.subject, publicKey: this.vapid.publicKey, privateKey: this.vapid.privateKey },
      TTL: opts.ttl,
      urgency: opts.urgency,
      contentEncoding: "aes128gcm",
      ...(opts.topic ? { topic: opts.topic } : {}),
    });
    const headers: Record<string, string> = {};
    for (const [k, v] of Object.entries(details.headers)) headers[k] = String(v);
    const { status, error } = await pinnedPost(details.endpoint, {
      headers,
      body: details.body ?? "",
      allowPrivate: this.allowPrivate,
      timeoutMs: this.timeoutMs,
      bodyCap: RESPONSE_BODY_CAP,
    });
    if (status === null) throw new Error(`push to the endpoint failed: ${error}`);
    return status;
  }
}
