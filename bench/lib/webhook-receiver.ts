// The bench's webhook endpoints: one node:http server on this machine, a path per receiving agent, each request's
// signature checked with its agent's secret (by the SDK's verifyWebhook, as a receiver would), a message's body
// handed to `got` just before the 204 that acknowledges it. The node under test must allow endpoints on private
// addresses (FLOCK_WEBHOOK_ALLOW_PRIVATE=1: the bench sets it on a node it starts itself).
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { verifyWebhook } from "../../client/webhooks.ts";
import { type Member, pool } from "./fleet.ts";
import { readBody } from "./read-body.ts";

export interface WebhookReceivers {
  /** Requests whose signature did not verify (answered 400). */
  refused(): number;
  close(): Promise<void>;
}

/** Sets every receiver's webhook to this machine's server and calls `got(body)` per message.created taken. */
export async function webhookReceivers(receivers: Member[], got: (body: string) => void): Promise<WebhookReceivers> {
  const secrets = new Map<string, string>();
  let refused = 0;
  const server = createServer((req, res) => {
    void readBody(req).then((raw) => {
      const secret = secrets.get((req.url ?? "").slice("/r/".length));
      try {
        const event = verifyWebhook(secret ?? "", req.headers, raw);
        if (event.type === "message.created") got(event.data.body);
        res.writeHead(204).end();
      } catch {
        refused++;
        res.writeHead(400).end();
      }
    });
  });
  server.keepAliveTimeout = 60_000;
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  const port = (server.address() as AddressInfo).port;
  await pool(receivers, 16, async (r) => {
    const set = await r.flock.setWebhook({ url: `http://127.0.0.1:${port}/r/${r.id}` });
    secrets.set(r.id, set.secret!);
  });
  return {
    refused: () => refused,
    close: () => {
      server.closeAllConnections();
      return new Promise((r) => server.close(() => r()));
    },
  };
}
