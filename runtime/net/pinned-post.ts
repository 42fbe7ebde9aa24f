// One POST to an address runtime/net/outbound-guard.ts checked: the host resolved and every address it has checked
// (unless private ones are allowed), the connection's lookup answering only the address checked (it cannot go
// elsewhere), redirects not followed, the answer's body read up to a cap and dropped, the whole attempt bounded by a
// time-out. Webhook deliveries (runtime/webhooks/sender.ts) and Web Push (runtime/push/sender.ts) both send through it.
import http from "node:http";
import https from "node:https";
import type { LookupFunction } from "node:net";
import { checkOutboundUrl, type PinnedAddress, resolvePinned } from "./outbound-guard.ts";

export interface PinnedPostOptions {
  headers: Record<string, string>;
  body: string | Buffer;
  allowPrivate: boolean;
  timeoutMs: number;
  /** Bytes of the answer's body read before the connection is let go. */
  bodyCap: number;
  /** Keep-alive agents to send through (a sender's own); without them, a connection per POST. */
  agents?: { http: http.Agent; https: https.Agent };
}

export interface PostOutcome {
  /** The status answered; null when none came (refused, timed out, address refused). */
  status: number | null;
  /** Why it failed, or null on a 2xx. */
  error: string | null;
}

/** A lookup that answers the checked address whatever it is asked. */
function pinned(a: PinnedAddress): LookupFunction {
  return (_host, options, cb) => {
    if (options.all) cb(null, [{ address: a.address, family: a.family }]);
    else cb(null, a.address, a.family);
  };
}

/** POST `opts.body` to `url`: the outcome, never a throw. */
export async function pinnedPost(url: string, opts: PinnedPostOptions): Promise<PostOutcome> {
  // checked again here, not only when set: the operator's setting may have changed since
  const checked = checkOutboundUrl(url, opts.allowPrivate);
  if ("refused" in checked) return { status: null, error: `the url ${checked.refused}` };
  const target = checked.url;
  let address: PinnedAddress;
  try {
    address = await resolvePinned(target.hostname, opts.allowPrivate);
  } catch (err) {
    return { status: null, error: (err as Error).message };
  }
  const secure = target.protocol === "https:";
  const headers = { ...opts.headers, "content-length": String(Buffer.byteLength(opts.body)) };
  return new Promise<PostOutcome>((resolve) => {
    let done = false;
    const finish = (o: PostOutcome) => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      resolve(o);
    };
    const req = (secure ? https : http).request(target, {
      method: "POST",
      headers,
      ...(opts.agents ? { agent: secure ? opts.agents.https : opts.agents.http } : {}),
      lookup: pinned(address),
    });
    const timer = setTimeout(() => {
      finish({ status: null, error: `timed out after ${opts.timeoutMs} ms` });
      req.destroy();
    }, opts.timeoutMs);
    req.on("error", (err) => finish({ status: null, error: err.message }));
    req.on("response", (res) => {
      const status = res.statusCode ?? 0;
      const error =
        status >= 300 && status < 400
          ? `answered ${status}: redirects are not followed`
          : status >= 200 && status < 300
            ? null
            : `answered ${status}`;
      let read = 0;
      res.on("data", (chunk: Buffer) => {
        read += chunk.length;
        // past the cap the rest is not read: the connection goes
        if (read > opts.bodyCap) {
          res.destroy();
          finish({ status, error });
        }
      });
      res.on("end", () => finish({ status, error }));
      res.on("error", (err) => finish({ status, error: err.message }));
    });
    req.end(opts.body);
  });
}
