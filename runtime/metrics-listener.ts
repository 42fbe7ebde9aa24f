// The metrics listener (FLOCK_METRICS_PORT): Prometheus' convention of a port of its own for /metrics, answered
// without a token and bound to loopback unless FLOCK_METRICS_HOST says otherwise (whatever reaches that address may
// read it). A small node:http server rather than a second uWS app: it answers one scrape every few seconds, and
// node:http can drop the connections a scraper keeps alive when the node stops (uWS v20.30 has no app.close()).
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import type { Logger } from "./log.ts";
import type { Metrics } from "./metrics.ts";

export interface MetricsListener {
  /** The port it listens on (FLOCK_METRICS_PORT=0 picks one). */
  readonly port: number;
  /** Stop accepting and close every connection, kept-alive ones included. */
  close(): Promise<void>;
}

const listenFailure = (host: string, port: number, reason: string) =>
  `cannot listen for metrics on ${host}:${port} (${reason}): the port is in use (another Flock node, or another program) ` +
  `or the address is not one of this machine's; set FLOCK_METRICS_PORT (and FLOCK_METRICS_HOST) to others, or unset it`;

const COMMON = { "X-Content-Type-Options": "nosniff", "Cache-Control": "no-store" };

function answer(
  res: ServerResponse,
  status: number,
  type: string,
  body: string,
  headers: Record<string, string> = {},
): void {
  res.writeHead(status, { ...COMMON, ...headers, "Content-Type": type, "Content-Length": Buffer.byteLength(body) });
  res.end(res.req.method === "HEAD" ? undefined : body);
}

function fail(
  res: ServerResponse,
  status: number,
  error: string,
  message: string,
  headers: Record<string, string> = {},
): void {
  answer(res, status, "application/json", JSON.stringify({ error, message }), headers);
}

async function serve(metrics: Metrics, log: Logger, req: IncomingMessage, res: ServerResponse): Promise<void> {
  const method = req.method ?? "GET";
  const path = (req.url ?? "/").split("?")[0];
  if (path !== "/metrics")
    return fail(res, 404, "not_found", `no route for ${method} ${path}: this listener serves GET /metrics`);
  if (method !== "GET" && method !== "HEAD")
    return fail(res, 405, "method_not_allowed", `${method} /metrics: only GET and HEAD`, { Allow: "GET, HEAD" });
  try {
    answer(res, 200, metrics.registry.contentType, await metrics.registry.metrics());
  } catch (err) {
    log.error({ err }, "metrics listener: collecting the metrics failed");
    fail(res, 500, "internal", "collecting the metrics failed");
  }
}

/** Listen on `host`:`port` for scrapes of `metrics`; rejects with one line naming the address when it cannot. */
export function listenMetrics(metrics: Metrics, host: string, port: number, log: Logger): Promise<MetricsListener> {
  const server: Server = createServer((req, res) => void serve(metrics, log, req, res));
  return new Promise((resolve, reject) => {
    server.once("error", (err: NodeJS.ErrnoException) =>
      reject(new Error(listenFailure(host, port, err.code ?? err.message))),
    );
    server.listen({ host, port, exclusive: true }, () => {
      server.on("error", (err) => log.warn({ err }, "metrics listener error"));
      const close = () =>
        new Promise<void>((done) => {
          server.close(() => done());
          server.closeAllConnections();
        });
      resolve({ port: (server.address() as AddressInfo).port, close });
    });
  });
}
