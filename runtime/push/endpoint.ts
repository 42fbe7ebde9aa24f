// What a push subscription may carry (docs/ARCHITECTURE.md, "Web Push"). The endpoint comes from a browser, so from
// anyone: without the outbound rules (runtime/net/outbound-guard.ts, the same ones webhooks keep) a subscription would
// make the node POST to its own loopback, the private network or a cloud's metadata address. The endpoint is checked
// when subscribing and again, resolved and pinned, on every push (runtime/net/pinned-post.ts).
// FLOCK_PUSH_ALLOW_PRIVATE lifts the rules (http:// and private addresses) for tests and local development.
import { createECDH } from "node:crypto";
import { checkOutboundUrl } from "../net/outbound-guard.ts";

/** Why `endpoint` may not be pushed to, or undefined when it may (as far as can be told without resolving it). */
export function endpointRefusal(endpoint: string, allowPrivate: boolean): string | undefined {
  const checked = checkOutboundUrl(endpoint, allowPrivate);
  return "refused" in checked ? checked.refused : undefined;
}

/** Why `p256dh` (base64url) cannot be encrypted to, or undefined when it is a point of P-256. */
export function keyRefusal(p256dh: string): string | undefined {
  try {
    const probe = createECDH("prime256v1");
    probe.generateKeys();
    probe.computeSecret(Buffer.from(p256dh, "base64url"));
    return undefined;
  } catch {
    return "must be a point of the P-256 curve";
  }
}
