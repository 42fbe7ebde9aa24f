// The facilitator this node verifies and settles through (FACILITATOR_URL), with @x402/core's HTTP client.
import { HTTPFacilitatorClient } from "@x402/core/http";
import type { Config } from "../config.ts";

const clients = new WeakMap<Config, HTTPFacilitatorClient>();

/** Null when no facilitator is configured (a paid send still gets its 402; a payment then answers 503 payments_unavailable). */
export function facilitatorFor(config: Config): HTTPFacilitatorClient | null {
  if (!config.FACILITATOR_URL) return null;
  let c = clients.get(config);
  if (!c) {
    c = new HTTPFacilitatorClient({ url: config.FACILITATOR_URL, timeoutMs: 60_000 });
    clients.set(config, c);
  }
  return c;
}
