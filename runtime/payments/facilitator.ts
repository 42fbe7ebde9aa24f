// The facilitator this node verifies and settles through (FACILITATOR_URL), with @x402/core's HTTP client;
// built once by startNode (svc.facilitator). @x402/core is imported only when a facilitator is configured.
import type { HTTPFacilitatorClient } from "@x402/core/http";
import type { Config } from "../config.ts";

/** Null when no facilitator is configured (a paid send still gets its 402; a payment then answers 503 payments_unavailable). */
export async function facilitatorClient(config: Config): Promise<HTTPFacilitatorClient | null> {
  if (!config.FACILITATOR_URL) return null;
  const { HTTPFacilitatorClient } = await import("@x402/core/http");
  return new HTTPFacilitatorClient({ url: config.FACILITATOR_URL, timeoutMs: 60_000 });
}
