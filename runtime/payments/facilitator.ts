// The facilitator this node verifies and settles through (FACILITATOR_URL), with @x402/core's HTTP client;
// built once by startNode (svc.facilitator).
import { HTTPFacilitatorClient } from "@x402/core/http";
import type { Config } from "../config.ts";

/** Null when no facilitator is configured (a paid send still gets its 402; a payment then answers 503 payments_unavailable). */
export function facilitatorClient(config: Config): HTTPFacilitatorClient | null {
  if (!config.FACILITATOR_URL) return null;
  return new HTTPFacilitatorClient({ url: config.FACILITATOR_URL, timeoutMs: 60_000 });
}
