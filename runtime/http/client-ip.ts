// The client's address. Without TRUST_PROXY it is the peer's. With it, proxy-addr's rule: the peer and then the
// X-Forwarded-For entries from the right are walked, each hop the trust spec trusts is skipped, and the first one
// it does not trust is the client. Entries to the left of that one are whatever the client wrote: never used.
import { isIP } from "node:net";
import proxyAddr from "proxy-addr";
import type { HttpResponse } from "uWebSockets.js";

/** Whether the hop at `addr`, `hop` steps from this node (0: the peer), is a proxy of ours. */
export type ProxyTrust = (addr: string, hop: number) => boolean;

/**
 * Compiles TRUST_PROXY once, at configuration load: `0`/`false` (off), a hop count (`1`: the peer is our one
 * proxy; `true` means `1`), or a comma-separated list of addresses, CIDRs and proxy-addr's names (`loopback`,
 * `linklocal`, `uniquelocal`). Throws on anything else.
 */
export function parseTrustProxy(spec: string): ProxyTrust | undefined {
  const v = spec.trim().toLowerCase();
  if (v === "" || v === "0" || v === "false") return undefined;
  if (v === "true") return trustHops(1);
  if (/^\d+$/.test(v)) {
    const n = Number(v);
    if (n > 32) throw new Error("a hop count is at most 32");
    return trustHops(n);
  }
  const list = v.split(",").map((s) => s.trim());
  if (list.some((s) => s === "")) throw new Error("an empty entry in the list");
  try {
    return proxyAddr.compile(list);
  } catch (err) {
    throw new Error(
      `${(err as Error).message} (expected a hop count, addresses or CIDRs, or loopback/linklocal/uniquelocal)`,
    );
  }
}

function trustHops(n: number): ProxyTrust {
  return (_addr, hop) => hop < n;
}

export function clientIp(res: HttpResponse, forwardedFor: string | undefined, trust: ProxyTrust | undefined): string {
  return resolveClientIp(Buffer.from(res.getRemoteAddressAsText()).toString(), forwardedFor, trust);
}

/**
 * The walk itself. Always answers an address (node:net isIP): an entry that is not one stops the walk at the
 * nearest hop known to be real (the proxy that wrote it), so no text a client controls becomes a key.
 */
export function resolveClientIp(peer: string, forwardedFor: string | undefined, trust: ProxyTrust | undefined): string {
  let addr = peer.toLowerCase();
  if (!trust || !forwardedFor) return addr;
  const entries = forwardedFor.split(",");
  let hop = 0;
  for (let i = entries.length - 1; i >= 0; i--) {
    const next = entries[i]!.trim();
    if (next === "") continue;
    if (!trust(addr, hop)) return addr;
    if (isIP(next) === 0) return addr;
    addr = next.toLowerCase();
    hop++;
  }
  return addr;
}
