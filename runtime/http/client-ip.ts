// The client's address: the first X-Forwarded-For entry when the proxy is trusted, else the peer address.
import type { HttpResponse } from "uWebSockets.js";

export function clientIp(res: HttpResponse, forwardedFor: string | undefined, trustProxy: boolean): string {
  if (trustProxy && forwardedFor) {
    const first = forwardedFor.split(",")[0]!.trim();
    if (first) return first;
  }
  return Buffer.from(res.getRemoteAddressAsText()).toString();
}
