// Process entry: configuration, one node, signals. Any startup failure is a clear message and exit code 1. Once
// listening, one human line on stderr names the address (`flock listening on http://localhost:8080`); the log
// itself stays pino's JSON on stdout.
import { ConfigError, loadConfig } from "./config.ts";
import { createLogger } from "./log.ts";
import { startNode } from "./server.ts";
import { onUnhandledRejection } from "./unhandled.ts";

/** Signals within this long of the first are the same request to stop (see stop). */
const SAME_SIGNAL_MS = 1000;

async function main(): Promise<void> {
  let config: ReturnType<typeof loadConfig>;
  try {
    config = loadConfig();
  } catch (err) {
    if (err instanceof ConfigError) {
      process.stderr.write(`flock: ${err.message}\n`);
      process.exit(1);
    }
    throw err;
  }
  const log = createLogger(config.LOG_LEVEL);
  process.on(
    "unhandledRejection",
    onUnhandledRejection(log, (code) => process.exit(code)),
  );
  let node: Awaited<ReturnType<typeof startNode>>;
  try {
    node = await startNode(config, log);
  } catch (err) {
    // printed once, on stderr: the reason (with LOG_LEVEL=debug or trace, the stack too)
    const e = err instanceof Error ? err : new Error(String(err));
    const verbose = config.LOG_LEVEL === "debug" || config.LOG_LEVEL === "trace";
    process.stderr.write(`flock: failed to start: ${verbose && e.stack ? e.stack : e.message}\n`);
    process.exit(1);
  }
  // for the person at the terminal, beside the JSON log (stdout stays one JSON object a line for log collectors)
  process.stderr.write(`${listeningLine(config.HOST, node.port)}\n`);
  let signalledAt: number | undefined;
  const stop = (signal: string) => {
    if (signalledAt !== undefined) {
      // Ctrl-C under `npm start` reaches node twice at once: from the terminal (the whole process group) and as
      // npm forwards it. Only a signal sent again later is a second request, to exit at once.
      if (performance.now() - signalledAt < SAME_SIGNAL_MS) return;
      log.warn({ signal }, "second signal: exiting now");
      process.exit(1);
    }
    signalledAt = performance.now();
    log.info({ signal }, "shutting down");
    // SIGTERM is an orchestrator's: linger while it stops routing here. SIGINT is a person at a terminal.
    node.close({ linger: signal === "SIGTERM" }).then(
      () => process.exit(0),
      (err) => {
        log.error({ err }, "shutdown failed");
        process.exit(1);
      },
    );
  };
  process.on("SIGTERM", () => stop("SIGTERM"));
  process.on("SIGINT", () => stop("SIGINT"));
}

/** `flock listening on http://127.0.0.1:8080`; a wildcard HOST is shown as localhost, noting every interface listens. */
function listeningLine(host: string, port: number): string {
  const any = host === "0.0.0.0" || host === "::" || host === "[::]";
  const shown = any ? "localhost" : host.includes(":") && !host.startsWith("[") ? `[${host}]` : host;
  return `flock listening on http://${shown}:${port}${any ? ` (every interface, ${host})` : ""}`;
}

void main();
