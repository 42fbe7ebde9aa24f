// A node:http request's whole body as text (UTF-8): what a webhook endpoint verifies, exactly as it arrived. Used by
// the bench's endpoints and the tests' (test/webhook-receiver.ts, test/chaos/webhooks.ts).
import type { IncomingMessage } from "node:http";

export function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    let s = "";
    req.setEncoding("utf8");
    req.on("data", (c: string) => (s += c));
    req.on("end", () => resolve(s));
    req.on("error", reject);
  });
}
