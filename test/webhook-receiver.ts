// A webhook endpoint on this machine for the webhook tests: it records every request (headers, body, whether its
// signature verifies with the secret it is told, by the standardwebhooks package's own Webhook.verify) and answers
// what the test's `answer` says (a status, or "hang": no answer until the test ends).
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { Webhook } from "standardwebhooks";
import { readBody } from "../bench/lib/read-body.ts";

export interface Received {
  id: string;
  timestamp: string;
  signature: string;
  body: string;
  json: { type: string; id: string; created_at: string; data: Record<string, unknown> };
  /** Whether Webhook.verify accepted it with each of the secrets the receiver holds, in order. */
  verified: boolean[];
}

export type Answer = number | "hang" | { status: number; headers: Record<string, string> };

export class Receiver {
  readonly got: Received[] = [];
  /** The secrets to verify with (the newest first). */
  secrets: string[] = [];
  answer: (r: Received, n: number) => Answer = () => 200;
  private readonly server: Server;
  private readonly hanging: (() => void)[] = [];

  private constructor() {
    this.server = createServer((req, res) => {
      void readBody(req).then((body) => {
        const headers = {
          "webhook-id": String(req.headers["webhook-id"] ?? ""),
          "webhook-timestamp": String(req.headers["webhook-timestamp"] ?? ""),
          "webhook-signature": String(req.headers["webhook-signature"] ?? ""),
        };
        const verified = this.secrets.map((s) => {
          try {
            new Webhook(s).verify(body, headers);
            return true;
          } catch {
            return false;
          }
        });
        const r: Received = {
          id: headers["webhook-id"],
          timestamp: headers["webhook-timestamp"],
          signature: headers["webhook-signature"],
          body,
          json: JSON.parse(body) as Received["json"],
          verified,
        };
        this.got.push(r);
        const a = this.answer(r, this.got.length);
        if (a === "hang") {
          this.hanging.push(() => res.destroy());
          return;
        }
        if (typeof a === "number") res.writeHead(a, { "content-type": "text/plain" }).end("ok");
        else res.writeHead(a.status, a.headers).end();
      });
    });
  }

  static async start(t: { teardown(fn: () => Promise<void> | void): void }): Promise<Receiver> {
    const r = new Receiver();
    await new Promise<void>((resolve) => r.server.listen(0, "127.0.0.1", resolve));
    t.teardown(() => r.close());
    return r;
  }

  get url(): string {
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}/hook`;
  }

  /** The message ids of message.created events received, in the order they came. */
  messages(): string[] {
    return this.got.filter((r) => r.json.type === "message.created").map((r) => r.json.data["id"] as string);
  }

  close(): Promise<void> {
    for (const h of this.hanging.splice(0)) h();
    this.server.closeAllConnections();
    return new Promise((resolve) => this.server.close(() => resolve()));
  }
}
