// One attempt to POST an event to an endpoint: signed by the Standard Webhooks scheme (the `standardwebhooks`
// package; each live secret signs, so a receiver holding either verifies during a rotation's grace), sent through
// runtime/net/pinned-post.ts (the address checked and pinned, redirects not followed, the answer's body capped and
// ignored, the whole attempt bounded by a time-out) over this sender's keep-alive connections.
import http from "node:http";
import https from "node:https";
import { Webhook } from "standardwebhooks";
import { pinnedPost } from "../net/pinned-post.ts";

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

export class WebhookSender {
  private readonly agents = {
    http: new http.Agent({ keepAlive: true, maxSockets: Infinity }),
    https: new https.Agent({ keepAlive: true, maxSockets: Infinity }),
  };

  constructor(private readonly opts: SenderOptions) {}

  /** POST `body` (the event's JSON) to `url` as event `id`, signed with `secrets`: the outcome, never a throw. */
  async send(url: string, secrets: readonly string[], id: string, body: string): Promise<AttemptOutcome> {
    const started = performance.now();
    const at = new Date(this.opts.now());
    const { status, error } = await pinnedPost(url, {
      headers: {
        "content-type": "application/json",
        "user-agent": "Flock-Webhooks/1",
        "webhook-id": id,
        "webhook-timestamp": String(Math.floor(at.getTime() / 1000)),
        "webhook-signature": signatures(secrets, id, at, body),
      },
      body,
      allowPrivate: this.opts.allowPrivate,
      timeoutMs: this.opts.timeoutMs,
      bodyCap: this.opts.bodyCap,
      agents: this.agents,
    });
    const ok = status !== null && status >= 200 && status < 300;
    return { status, ok, error, latencyMs: Math.round(performance.now() - started) };
  }

  close(): void {
    this.agents.http.destroy();
    this.agents.https.destroy();
  }
}
