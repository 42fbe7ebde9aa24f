// The absolute URLs this node hands out (the x402 requirements' `resource`) name where clients reach the service:
// FLOCK_PUBLIC_URL when set, otherwise the address the node listens on (a wildcard bind, 0.0.0.0 or ::, named as
// 127.0.0.1: the one address of it sure to answer). Never a request's Host, X-Forwarded-Host or X-Forwarded-Proto:
// a client writes those, and would have its own host named back in what the node signs up to.
import type { Config } from "./config.ts";
import type { SelfAddress } from "./self-address.ts";

/** `path` (from the root, "/v1/...") under the node's public base URL. */
export function publicUrl(config: Pick<Config, "FLOCK_PUBLIC_URL" | "PORT">, self: SelfAddress, path: string): string {
  const base = config.FLOCK_PUBLIC_URL ?? self.url ?? `http://127.0.0.1:${config.PORT}`;
  return `${base}${path}`;
}
