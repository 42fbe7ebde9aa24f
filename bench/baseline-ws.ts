// Baseline for WebSocket scenarios: a bare uWebSockets.js server whose clients all subscribe to one topic;
// a client frame "pub:<payload>" publishes <payload> to every subscriber with uWS's built-in pub/sub.
// Prints {"port": N} once listening.
import { loadUws } from "../runtime/uws.ts";

// the same build as Flock on this platform (runtime/uws.ts), so the ratio compares like with like
const { uws } = loadUws();
const app = uws.App();
app.ws("/*", {
  maxPayloadLength: 64 * 1024,
  idleTimeout: 120,
  open: (ws) => {
    ws.subscribe("all");
  },
  message: (ws, data) => {
    const text = Buffer.from(data).toString();
    if (text.startsWith("pub:")) app.publish("all", text.slice(4), false);
  },
});
app.listen("127.0.0.1", 0, (s) => {
  if (!s) process.exit(1);
  process.stdout.write(`${JSON.stringify({ port: uws.us_socket_local_port(s) })}\n`);
});
