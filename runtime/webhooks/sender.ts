// One attempt to POST an event to an endpoint: signed by the Standard Webhooks scheme (the `standardwebhooks`
// package; each live secret signs, so a receiver holding either verifies during a rotation's grace), sent to the
// address runtime/webhooks/address-guard.ts checked (the connection's lookup answers only that address), redirects
// not followed, the answer's body read up to a cap and ignored, the whole attempt bounded by a time-out.
import http from "node:http";
import https from "node:https";
import type { LookupFunction } from "node:net";
import { Webhook } from "standardwebhooks";
import { resolvePinned, type PinnedAddress } from "./address-guard.ts";

export interface AttemptOutcome {
  /** The status answered; null when none came (refused, timed out, address refused). */
  status: number | null;
  /** A 2xx came: the event is taken. */
  ok: boolean;
  error: string | null;
  latencyMs: number;
}

export interface SenderOptions {
  allowPrivate: boolean;
  timeoutMs: number;
  /** Bytes of an answer's body read before the connection is let go. */
  bodyCap: number;
  now: () => number;
}

/** The `webhook-signature` header: `v1,<sig>` for each secret, space-separated (the newest first). */
export function signatures(secrets: readonly string[], id: string, at: Date, body: string): string {
  return secrets.map((s) => new Webhook(s).sign(id, at, body)).join(" ");
}

/** A lookup that answers the checked address whatever it is asked (a connection cannot go elsewhere). */
function pinned(a: PinnedAddress): LookupFunction {
  return (_host, options, cb) => {
    if (options.all) cb(null, [{ address: a.address, family: a.family }]);
    else cb(null, a.address, a.family);
  };
}

export class WebhookSender {
  private readonly agents = {
    http: new http.Agent({ keepAlive: true, maxSockets: Infinity }),
    https: new https.Agent({ keepAlive: true, maxSockets: Infinity }),
  };

  constructor(private readonly opts: SenderOptions) {}

  /** POST `body` (the event's JSON) to `url` as event `id`, signed with `secrets`: the outcome, never a throw. */
  async send(url: string, secrets: readonly string[], id: string, body: string): Promise<AttemptOutcome> {
    const started = performance.now();
    const outcome = (status: number | null, error: string | null): AttemptOutcome => ({
      status,
      ok: status !== null && status >= 200 && status < 300,
      error,
      latencyMs: Math.round(performance.now() - started),
    });
    let target: URL;
    try {
      target = new URL(url);
    } catch {
      return outcome(null, "invalid url");
    }
    const secure = target.protocol === "https:";
    if (!secure && !(this.opts.allowPrivate && target.protocol === "http:"))
      return outcome(null, "url must be https://");
    let address: PinnedAddress;
    try {
      address = await resolvePinned(target.hostname, this.opts.allowPrivate);
    } catch (err) {
      return outcome(null, (err as Error).message);
    }
    const at = new Date(this.opts.now());
    const headers = {
      "content-type": "application/json",
      "user-agent": "Flock-Webhooks/1",
      "webhook-id": id,
      "webhook-timestamp": String(Math.floor(at.getTime() / 1000)),
      "webhook-signature": signatures(secrets, id, at, body),
      "content-length": String(Buffer.byteLength(body)),
    };
    return new Promise<AttemptOutcome>((resolve) => {
      let done = false;
      const finish = (o: AttemptOutcome) => {
        if (done) return;
        done = true;
        clearTimeout(timer);
        resolve(o);
      };
      const req = (secure ? https : http).request(target, {
        method: "POST",
        headers,
        agent: secure ? this.agents.https : this.agents.http,
        lookup: pinned(address),
      });
      const timer = setTimeout(() => {
        finish(outcome(null, `timed out after ${this.opts.timeoutMs} ms`));
        req.destroy();
      }, this.opts.timeoutMs);
      req.on("error", (err) => finish(outcome(null, err.message)));
      req.on("response", (res) => {
        const status = res.statusCode ?? 0;
        const redirect = status >= 300 && status < 400;
        let read = 0;
        res.on("data", (chunk: Buffer) => {
          read += chunk.length;
          // past the cap the rest is not read: the connection goes
          if (read > this.opts.bodyCap) {
            res.destroy();
            finish(outcome(status, status >= 200 && status < 300 ? null : `answered ${status}`));
          }
        });
        res.on("end", () =>
          finish(
            outcome(
              status,
              redirect ? `answered ${status}: redirects are not followed` : status < 300 ? null : `answered ${status}`,
            ),
          ),
        );
        res.on("error", (err) => finish(outcome(status, err.message)));
      });
      req.end(body);
    });
  }

  close(): void {
    this.agents.http.destroy();
    this.agents.https.destroy();
  }
}
