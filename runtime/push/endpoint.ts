// Where a push may go (docs/ARCHITECTURE.md, "Web Push"): a push service's https:// endpoint on a public address. The
// endpoint comes from a browser, so from anyone: without these rules a subscription would make the node POST to its own
// loopback, the private network or a cloud's metadata address. The name is checked when subscribing (a literal address)
// and again when a push resolves it: every address the name resolves to must be public, and the connection goes to the
// address checked (pinned), so a name that resolves differently the second time reaches nothing it was not checked for.
// FLOCK_PUSH_ALLOW_PRIVATE lifts both rules (http:// and private addresses) for tests and local development.
import { createECDH } from "node:crypto";
import { lookup as dnsLookup, type LookupAddress } from "node:dns";
import { BlockList, isIP } from "node:net";

const PRIVATE = new BlockList();
for (const [net, bits] of [
  ["0.0.0.0", 8], // "this network"
  ["10.0.0.0", 8],
  ["100.64.0.0", 10], // carrier-grade NAT
  ["127.0.0.0", 8],
  ["169.254.0.0", 16], // link-local, cloud metadata
  ["172.16.0.0", 12],
  ["192.0.0.0", 24],
  ["192.168.0.0", 16],
  ["198.18.0.0", 15],
  ["224.0.0.0", 4], // multicast
  ["240.0.0.0", 4], // reserved, broadcast
] as const)
  PRIVATE.addSubnet(net, bits, "ipv4");
for (const [net, bits] of [
  ["::", 128],
  ["::1", 128],
  ["fc00::", 7], // unique local
  ["fe80::", 10], // link-local
  ["ff00::", 8], // multicast
] as const)
  PRIVATE.addSubnet(net, bits, "ipv6");

/** Whether `ip` is loopback, private, link-local or otherwise not a public host's (IPv4-mapped IPv6 as its IPv4). */
export function isPrivateAddress(ip: string): boolean {
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(ip);
  if (mapped) return PRIVATE.check(mapped[1]!, "ipv4");
  const family = isIP(ip);
  if (family === 0) return true;
  return PRIVATE.check(ip, family === 4 ? "ipv4" : "ipv6");
}

/** Why `endpoint` may not be pushed to, or undefined when it may (as far as can be told without resolving it). */
export function endpointRefusal(endpoint: string, allowPrivate: boolean): string | undefined {
  if (!URL.canParse(endpoint)) return "must be an https:// URL";
  const u = new URL(endpoint);
  if (u.username || u.password) return "must not carry credentials";
  if (allowPrivate) return u.protocol === "https:" || u.protocol === "http:" ? undefined : "must be an http(s):// URL";
  if (u.protocol !== "https:") return "must be an https:// URL";
  const host = u.hostname.replace(/^\[(.*)\]$/, "$1").toLowerCase();
  if (isIP(host) !== 0)
    return isPrivateAddress(host) ? "must not be a loopback, private or link-local address" : undefined;
  if (host === "localhost" || host.endsWith(".localhost") || host.endsWith(".local") || !host.includes("."))
    return "must name a public host";
  return undefined;
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

type LookupCallback = (err: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void;

/**
 * A `lookup` for node:http(s) that resolves the name, refuses it when any of its addresses is not public (unless
 * allowed) and answers only what it checked: the connection is made to that address.
 */
export function checkedLookup(allowPrivate: boolean) {
  return (hostname: string, options: { all?: boolean }, callback: LookupCallback): void => {
    dnsLookup(hostname, { all: true }, (err, addresses) => {
      if (err) return callback(err, []);
      const bad = addresses.find((a) => isPrivateAddress(a.address));
      if (bad && !allowPrivate) {
        const e: NodeJS.ErrnoException = new Error(`${hostname} resolves to ${bad.address}, which is not public`);
        e.code = "EPRIVATEADDRESS";
        return callback(e, []);
      }
      const first = addresses[0];
      if (!first) return callback(Object.assign(new Error(`${hostname} has no address`), { code: "ENOTFOUND" }), []);
      if (options.all) callback(null, addresses);
      else callback(null, first.address, first.family);
    });
  };
}
