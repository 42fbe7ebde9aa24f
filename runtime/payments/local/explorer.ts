// A block explorer for the local chain, so a payment settled there links somewhere as one on a public chain does:
// GET /tx/<hash> answers a small HTML page read from the chain over JSON-RPC (status, block, from, to, value, gas
// payer, and each ERC-20 Transfer the transaction emitted, in the token's units). The Flock node links to it
// through FLOCK_LOCAL_EXPLORER_URL (the /tx/ prefix), which `npm run payments:dev` prints. Bound to 127.0.0.1;
// development and tests only: the server never loads this module.
import { createServer, type Server, type ServerResponse } from "node:http";
import { createPublicClient, erc20Abi, formatEther, formatUnits, type Hex, http, parseEventLogs } from "viem";
import { listenLocal } from "./chain.ts";
import { localChain } from "./token.ts";

export interface LocalExplorer {
  /** Where it listens, e.g. http://127.0.0.1:4021. */
  url: string;
  /** The transaction page prefix (url + "/tx/"): the value of FLOCK_LOCAL_EXPLORER_URL. */
  txUrl: string;
  server: Server;
  stop(): Promise<void>;
}

const TX_PATH = /^\/tx\/(0x[0-9a-fA-F]{64})\/?$/;
const esc = (s: string) => s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

function page(res: ServerResponse, status: number, title: string, body: string): void {
  res.writeHead(status, {
    "content-type": "text/html; charset=utf-8",
    "content-security-policy": "default-src 'none'; style-src 'unsafe-inline'; base-uri 'none'; form-action 'none'",
    "x-content-type-options": "nosniff",
    "cache-control": "no-store",
  });
  res.end(`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>${esc(title)}</title>
<style>body{font:16px/1.45 system-ui,sans-serif;margin:1rem;color:#1b1f24}code{overflow-wrap:anywhere}th{text-align:left;padding-right:1rem;vertical-align:top}</style>
</head><body><h1>${esc(title)}</h1>${body}</body></html>
`);
}

const row = (name: string, value: string, attr: string) =>
  `<tr><th scope="row">${esc(name)}</th><td data-field="${attr}">${value}</td></tr>`;

/** Starts the explorer for the chain at `rpcUrl` (chain id `chainId`). */
export async function startLocalExplorer(opts: {
  rpcUrl: string;
  chainId?: number;
  port?: number;
}): Promise<LocalExplorer> {
  const client = createPublicClient({ chain: localChain(opts.rpcUrl, opts.chainId), transport: http(opts.rpcUrl) });
  // token metadata by address, read once per token
  const tokens = new Map<string, Promise<{ symbol: string; decimals: number }>>();
  const token = (address: Hex) => {
    const key = address.toLowerCase();
    let t = tokens.get(key);
    if (!t) {
      t = Promise.all([
        client.readContract({ address, abi: erc20Abi, functionName: "symbol" }),
        client.readContract({ address, abi: erc20Abi, functionName: "decimals" }),
      ]).then(([symbol, decimals]) => ({ symbol, decimals }));
      t.catch(() => tokens.delete(key));
      tokens.set(key, t);
    }
    return t;
  };

  async function txPage(res: ServerResponse, hash: Hex): Promise<void> {
    const [tx, receipt] = await Promise.all([
      client.getTransaction({ hash }).catch(() => null),
      client.getTransactionReceipt({ hash }).catch(() => null),
    ]);
    if (!tx)
      return page(res, 404, "Transaction not found", `<p>No transaction <code>${esc(hash)}</code> on this chain.</p>`);
    const status = receipt ? receipt.status : "pending";
    const logs = receipt ? parseEventLogs({ abi: erc20Abi, eventName: "Transfer", logs: receipt.logs }) : [];
    const transfers: string[] = [];
    for (const l of logs) {
      const t = await token(l.address).catch(() => ({ symbol: "?", decimals: 0 }));
      transfers.push(
        `<li data-transfer><span data-amount>${esc(formatUnits(l.args.value, t.decimals))} ${esc(t.symbol)}</span> from <code data-from>${esc(l.args.from)}</code> to <code data-to>${esc(l.args.to)}</code></li>`,
      );
    }
    page(
      res,
      200,
      "Transaction",
      `<table>
${row("Hash", `<code>${esc(tx.hash)}</code>`, "hash")}
${row("Status", esc(status), "status")}
${row("Block", tx.blockNumber === null ? "pending" : esc(tx.blockNumber.toString()), "block")}
${row("From", `<code>${esc(tx.from)}</code>`, "from")}
${row("To", tx.to ? `<code>${esc(tx.to)}</code>` : "contract creation", "to")}
${row("Value", `${esc(formatEther(tx.value))} ETH`, "value")}
${row("Gas used", receipt ? esc(receipt.gasUsed.toString()) : "pending", "gas")}
</table>
<h2>Token transfers</h2>
${transfers.length ? `<ul>${transfers.join("\n")}</ul>` : "<p>None.</p>"}
<p>Chain id ${esc(String(opts.chainId ?? 31337))}, the Flock local development chain.</p>`,
    );
  }

  const server = createServer((req, res) => {
    const path = (req.url ?? "/").split("?")[0] ?? "/";
    if (req.method !== "GET" && req.method !== "HEAD") return page(res, 405, "Method not allowed", "");
    const m = TX_PATH.exec(path);
    if (m) {
      txPage(res, m[1] as Hex).catch((err: unknown) =>
        page(res, 502, "Chain unreachable", `<p>${esc(err instanceof Error ? err.message : String(err))}</p>`),
      );
      return;
    }
    if (path === "/")
      return page(res, 200, "Flock local explorer", "<p>Transaction pages are at <code>/tx/&lt;hash&gt;</code>.</p>");
    page(res, 404, "Not found", "<p>Transaction pages are at <code>/tx/&lt;hash&gt;</code>.</p>");
  });
  const port = await listenLocal(server, opts.port ?? 0);
  const url = `http://127.0.0.1:${port}`;
  return {
    url,
    txUrl: `${url}/tx/`,
    server,
    stop: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
