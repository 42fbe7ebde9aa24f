// Baseline for HTTP scenarios: a bare uWebSockets.js server answering a fixed 1 KB JSON body.
// Prints {"port": N} on stdout once listening.
import { loadUws } from "../runtime/uws.ts";

// the same build as Flock on this platform (runtime/uws.ts), so the ratio compares like with like
const { uws } = loadUws();
const item = { id: "moment_117873677508280320", content: "x".repeat(40), visibility: "public" };
const filler = { moments: Array.from({ length: 12 }, () => item), has_more: true };
const body = JSON.stringify(filler).slice(0, 1024);
const payload = JSON.stringify({ data: body.slice(0, 1024 - 12) });

uws
  .App()
  .any("/*", (res) => {
    res.cork(() => {
      res.writeHeader("Content-Type", "application/json").end(payload);
    });
  })
  .listen("127.0.0.1", 0, (s) => {
    if (!s) process.exit(1);
    process.stdout.write(`${JSON.stringify({ port: uws.us_socket_local_port(s), bytes: payload.length })}\n`);
  });
