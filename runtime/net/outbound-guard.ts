// Where the node may POST on a user's behalf (a webhook endpoint an agent set, a push endpoint a browser gave): a URL
// checked when it is set, and the host's addresses checked each time it is resolved, the connection then made to the
// address checked (runtime/net/pinned-post.ts pins it), so a name that resolves differently the second time reaches
// nothing it was not checked for. Refused, unless the operator allows them (FLOCK_WEBHOOK_ALLOW_PRIVATE,
// FLOCK_PUSH_ALLOW_PRIVATE): http://, a host that names no public machine (localhost, *.localhost, *.local, a name
// without a dot), and every loopback, private, shared (carrier NAT), link-local, unique-local, multicast, reserved or
// unspecified address, IPv4 inside IPv6 included.
import { lookup } from "node:dns/promises";
import { BlockList, isIP } from "node:net";

const refused = new BlockList();
for (const [net, bits] of [
  ["0.0.0.0", 8], // unspecified, "this network"
  ["10.0.0.0", 8], // private
  ["100.64.0.0", 10], // shared address space (carrier NAT)
  ["127.0.0.0", 8], // loopback
  ["169.254.0.0", 16], // link-local (cloud metadata services)
  ["172.16.0.0", 12], // private
  ["192.0.0.0", 24], // protocol assignments
  ["192.168.0.0", 16], // private
  ["198.18.0.0", 15], // benchmarking
  ["224.0.0.0", 4], // multicast
  ["240.0.0.0", 4], // reserved, broadcast
] as const)
  refused.addSubnet(net, bits, "ipv4");
for (const [net, bits] of [
  ["::", 128], // unspecified
  ["::1", 128], // loopback
  ["64:ff9b::", 96], // IPv4 translated
  ["fc00::", 7], // unique-local
  ["fe80::", 10], // link-local
  ["ff00::", 8], // multicast
] as const)
  refused.addSubnet(net, bits, "ipv6");

/** The IPv4 address an IPv6 one carries (::ffff:a.b.c.d, ::a.b.c.d), or undefined. */
function embeddedV4(ip: string): string | undefined {
  const m = /^::(?:ffff:)?(\d+\.\d+\.\d+\.\d+)$/i.exec(ip);
  if (m) return m[1];
  const hex = /^::ffff:([0-9a-f]{1,4}):([0-9a-f]{1,4})$/i.exec(ip);
  if (!hex) return undefined;
  const hi = parseInt(hex[1]!, 16);
  const lo = parseInt(hex[2]!, 16);
  return `${hi >> 8}.${hi & 255}.${lo >> 8}.${lo & 255}`;
}

/** Whether `ip` (a literal address) is one the node may not reach unless private addresses are allowed. */
export function isRefusedAddress(ip: string): boolean {
  const bare = ip.replace(/^\[(.*)\]$/, "$1").replace(/%.*$/, "");
  const kind = isIP(bare);
  if (kind === 0) return true;
  if (kind === 4) return refused.check(bare, "ipv4");
  const v4 = embeddedV4(bare);
  return v4 !== undefined ? refused.check(v4, "ipv4") : refused.check(bare, "ipv6");
}

/** A host name that names no public machine: localhost, *.localhost, *.local (mDNS), or a name without a dot. */
function localName(host: string): boolean {
  const h = host.toLowerCase().replace(/\.$/, "");
  return h === "localhost" || h.endsWith(".localhost") || h.endsWith(".local") || !h.includes(".");
}

/**
 * An outbound URL as it may be set, or why not: a phrase for the field's 400 ("must be https://"), which the caller
 * prefixes with the field's name.
 */
export function checkOutboundUrl(raw: string, allowPrivate: boolean): { url: URL } | { refused: string } {
  if (!URL.canParse(raw)) return { refused: "must be an absolute https:// URL" };
  const url = new URL(raw);
  if (url.protocol !== "https:" && !(allowPrivate && url.protocol === "http:"))
    return { refused: allowPrivate ? "must be an http:// or https:// URL" : "must be an https:// URL" };
  if (url.username !== "" || url.password !== "") return { refused: "must not carry credentials" };
  if (url.hash !== "") return { refused: "must not carry a fragment" };
  const host = url.hostname.replace(/^\[(.*)\]$/, "$1");
  if (host === "") return { refused: "has no host" };
  if (allowPrivate) return { url };
  if (isIP(host) !== 0)
    return isRefusedAddress(host)
      ? { refused: "must not be a loopback, private, link-local or unspecified address" }
      : { url };
  if (localName(host)) return { refused: "must name a public host" };
  return { url };
}

/** The address to connect to for a host: resolved (a literal as it is), every address checked. */
export interface PinnedAddress {
  address: string;
  family: 4 | 6;
}

export class RefusedAddressError extends Error {}

/**
 * Resolve `host` and check what it resolves to: when any address is refused (and private ones are not allowed), the
 * attempt is refused, so a name with one public and one private address cannot be used to reach the private one.
 */
export async function resolvePinned(
  host: string,
  allowPrivate: boolean,
  resolve: (host: string) => Promise<{ address: string; family: number }[]> = (h) => lookup(h, { all: true }),
): Promise<PinnedAddress> {
  const bare = host.replace(/^\[(.*)\]$/, "$1");
  const literal = isIP(bare);
  const found = literal !== 0 ? [{ address: bare, family: literal }] : await resolve(bare);
  if (found.length === 0) throw new RefusedAddressError(`${host} resolves to no address`);
  if (!allowPrivate) {
    const bad = found.find((a) => isRefusedAddress(a.address));
    if (bad !== undefined)
      throw new RefusedAddressError(
        `${host} resolves to a refused address (${bad.address}): private addresses are off`,
      );
  }
  const first = found[0]!;
  return { address: first.address, family: first.family === 6 ? 6 : 4 };
}
