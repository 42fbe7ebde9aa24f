// A local x402 facilitator for development and tests: @x402/core's facilitator with @x402/evm's exact scheme,
// verifying EIP-3009 authorizations and settling them on the local chain from a viem wallet that pays the gas.
// Speaks the facilitator HTTP API (POST /verify, POST /settle, GET /supported) that @x402/core's
// HTTPFacilitatorClient calls. Bound to 127.0.0.1. The server never loads this module.
import { createServer, type IncomingMessage, type Server } from "node:http";
import { x402Facilitator } from "@x402/core/facilitator";
import type { PaymentPayload, PaymentRequirements } from "@x402/core/types";
import { toFacilitatorEvmSigner } from "@x402/evm";
import { ExactEvmScheme } from "@x402/evm/exact/facilitator";
import { type Account, publicActions } from "viem";
import { listenLocal } from "./chain.ts";
import { clients } from "./token.ts";

export interface LocalFacilitator {
  url: string;
  server: Server;
  /** Settlements broadcast so far (tests count them). */
  settled: () => number;
  stop(): Promise<void>;
}

interface Exchange {
  x402Version?: number;
  paymentPayload: PaymentPayload;
  paymentRequirements: PaymentRequirements;
}

async function readJson(req: IncomingMessage): Promise<Exchange> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const c of req as AsyncIterable<Buffer>) {
    size += c.length;
    if (size > 256 * 1024) throw new Error("request too large");
    chunks.push(c);
  }
  return JSON.parse(Buffer.concat(chunks).toString("utf8")) as Exchange;
}

const message = (err: unknown) => (err instanceof Error ? err.message : String(err));

/** Starts the facilitator for `network` (e.g. "eip155:31337"), paying gas from `payer`. */
export async function startLocalFacilitator(opts: {
  rpcUrl: string;
  payer: Account;
  network: `${string}:${string}`;
  port?: number;
}): Promise<LocalFacilitator> {
  const { wallet } = clients(opts.rpcUrl, opts.payer);
  const client = wallet.extend(publicActions);
  const signer = toFacilitatorEvmSigner(
    {
      address: opts.payer.address,
      readContract: (a) => client.readContract(a as Parameters<typeof client.readContract>[0]),
      verifyTypedData: (a) => client.verifyTypedData(a as Parameters<typeof client.verifyTypedData>[0]),
      writeContract: (a) => client.writeContract(a as Parameters<typeof client.writeContract>[0]),
      sendTransaction: (a) => client.sendTransaction(a),
      waitForTransactionReceipt: (a) => client.waitForTransactionReceipt(a),
      getCode: (a) => client.getCode(a),
    },
    { confirmationTimeoutMs: 30_000 },
  );
  const facilitator = new x402Facilitator().register(opts.network, new ExactEvmScheme(signer));
  let settledCount = 0;

  const server = createServer((req, res) => {
    const reply = (status: number, body: unknown) => {
      res.writeHead(status, { "content-type": "application/json" });
      res.end(JSON.stringify(body));
    };
    void (async () => {
      try {
        if (req.method === "GET" && req.url === "/supported") return reply(200, facilitator.getSupported());
        if (req.method !== "POST" || (req.url !== "/verify" && req.url !== "/settle"))
          return reply(404, { error: "not found" });
        const ex = await readJson(req);
        if (req.url === "/verify") {
          try {
            return reply(200, await facilitator.verify(ex.paymentPayload, ex.paymentRequirements));
          } catch (err) {
            return reply(200, { isValid: false, invalidReason: "verification_error", invalidMessage: message(err) });
          }
        }
        try {
          const out = await facilitator.settle(ex.paymentPayload, ex.paymentRequirements);
          if (out.success) settledCount++;
          return reply(200, out);
        } catch (err) {
          return reply(200, {
            success: false,
            errorReason: "settlement_error",
            errorMessage: message(err),
            transaction: "",
            network: ex.paymentRequirements.network,
          });
        }
      } catch (err) {
        reply(400, { error: message(err) });
      }
    })();
  });
  const port = await listenLocal(server, opts.port ?? 0);
  return {
    url: `http://127.0.0.1:${port}`,
    server,
    settled: () => settledCount,
    stop: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
