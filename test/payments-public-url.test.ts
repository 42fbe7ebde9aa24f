// The 402 requirements name the send route at the public URL from configuration (FLOCK_PUBLIC_URL), or at the
// address the node listens on without it: never at the request's Host, X-Forwarded-Host or X-Forwarded-Proto,
// which a client writes. No chain and no facilitator: the 402 follows from the paid agent's terms alone.
// The sends go through node:http, since fetch does not let a caller set Host.
import { request } from "node:http";
import t, { type Test } from "tap";
import { decodePaymentRequiredHeader } from "@x402/core/http";
import { call, registerAgent } from "./helpers/http.ts";
import { startTestNode, type TestNode } from "./helpers/node.ts";

const PAY_TO = "0x52908400098527886E0F7030069857D2E4169EE7";

/** A POST /v1/messages to the node's port carrying a forged Host (and forwarding headers). */
function forgedSend(
  node: TestNode,
  token: string,
  to: string,
): Promise<{ status: number; header: string | undefined; body: any }> {
  const payload = JSON.stringify({ to, body: "how much?" });
  return new Promise((resolve, reject) => {
    const req = request(
      {
        host: "127.0.0.1",
        port: node.port,
        method: "POST",
        path: "/v1/messages",
        headers: {
          Host: "evil.example",
          "X-Forwarded-Host": "evil-forwarded.example",
          "X-Forwarded-Proto": "https",
          Authorization: `Bearer ${token}`,
          "Content-Type": "application/json",
          "Content-Length": Buffer.byteLength(payload),
        },
      },
      (res) => {
        let text = "";
        res.setEncoding("utf8");
        res.on("data", (d: string) => (text += d));
        res.on("end", () =>
          resolve({
            status: res.statusCode ?? 0,
            header: res.headers["payment-required"] as string | undefined,
            body: JSON.parse(text),
          }),
        );
      },
    );
    req.on("error", reject);
    req.end(payload);
  });
}

/** The resource URL a forged send to a fresh paid agent is answered with, in the header and in the body. */
async function resourceOf(t: Test, node: TestNode): Promise<string> {
  const seller = await registerAgent(node.url, "Seller");
  const on = await call(node.url, "PATCH", "/v1/agents/me", {
    token: seller.token,
    json: { x402_enabled: true, price: 0.05, pay_to: PAY_TO },
  });
  t.equal(on.status, 200, "the seller charges");
  const buyer = await registerAgent(node.url, "Buyer");
  const r = await forgedSend(node, buyer.token, seller.id);
  t.equal(r.status, 402);
  t.equal(r.body.error, "payment_required");
  t.ok(r.header, "a PAYMENT-REQUIRED header");
  const url = decodePaymentRequiredHeader(r.header!).resource.url;
  t.equal(r.body.resource.url, url, "the body names the same resource");
  t.notMatch(url, /evil/, "nothing of the forged headers");
  return url;
}

t.test("FLOCK_PUBLIC_URL set: the requirements name it, whatever Host the request carries", async (t) => {
  const node = await startTestNode(t, { engine: "memory", env: { FLOCK_PUBLIC_URL: "https://flock.example/" } });
  t.equal(await resourceOf(t, node), "https://flock.example/v1/messages");
});

t.test("FLOCK_PUBLIC_URL with a proxy's path prefix", async (t) => {
  const node = await startTestNode(t, { engine: "memory", env: { FLOCK_PUBLIC_URL: "https://example.com/flock" } });
  t.equal(await resourceOf(t, node), "https://example.com/flock/v1/messages");
});

t.test("FLOCK_PUBLIC_URL unset: the address the node listens on", async (t) => {
  const node = await startTestNode(t, { engine: "memory" });
  t.equal(node.config.FLOCK_PUBLIC_URL, undefined);
  t.equal(await resourceOf(t, node), `http://127.0.0.1:${node.port}/v1/messages`);
});

t.test("FLOCK_PUBLIC_URL unset, bound to every interface: loopback at the bound port", async (t) => {
  const node = await startTestNode(t, { engine: "memory", env: { HOST: "0.0.0.0" } });
  t.equal(await resourceOf(t, node), `http://127.0.0.1:${node.port}/v1/messages`);
});
