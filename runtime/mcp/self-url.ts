// The URL at which the MCP endpoint reaches this same node over loopback (its tools are the SDK calling the node's
// own API with the caller's token). With a fixed PORT that is HOST:PORT (127.0.0.1 for a wildcard HOST). With PORT=0
// (an ephemeral port: tests, development) the node does not know its port here, so the port the request came in on
// (its Host header) is used, but only once a probe with a secret of this process came back from it echoed: the
// caller's token never goes to a port that is not a Flock node.
import { randomBytes } from "node:crypto";
import type { Services } from "../services.ts";

const known = new WeakMap<Services, string>();
const secret = `mcp-self-${randomBytes(12).toString("hex")}`;

function loopbackHost(host: string): string {
  if (host === "0.0.0.0" || host === "::" || host === "") return "127.0.0.1";
  return host.includes(":") ? `[${host}]` : host;
}

/** The node's own base URL, or undefined when it cannot be established. */
export async function selfUrl(svc: Services, hostHeader: string | undefined): Promise<string | undefined> {
  const cached = known.get(svc);
  if (cached) return cached;
  const host = loopbackHost(svc.config.HOST);
  if (svc.config.PORT !== 0) {
    const url = `http://${host}:${svc.config.PORT}`;
    known.set(svc, url);
    return url;
  }
  const port = /:(\d{1,5})$/.exec(hostHeader ?? "")?.[1];
  if (!port) return undefined;
  const url = `http://${host}:${port}`;
  try {
    const r = await fetch(`${url}/healthz`, { headers: { "x-request-id": secret }, signal: AbortSignal.timeout(2000) });
    await r.body?.cancel();
    if (r.headers.get("x-request-id") !== secret) return undefined;
  } catch {
    return undefined;
  }
  known.set(svc, url);
  return url;
}
