// /metrics after the Prometheus convention: nothing is served openly on the public port (404 without
// FLOCK_METRICS_TOKEN; behind that bearer when it is set), and the metrics listener (FLOCK_METRICS_PORT, on
// 127.0.0.1 by default) answers without a token, and goes when the node closes, its kept-alive connections too.
import { connect } from "node:net";
import t from "tap";
import { call, registerAgent } from "./helpers/http.ts";
import { startTestNode } from "./helpers/node.ts";

const TOKEN = "metrics-secret-0123456789";

/** Whether a TCP connection to 127.0.0.1:`port` is accepted. */
function accepts(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const sock = connect(port, "127.0.0.1");
    sock.once("connect", () => {
      sock.destroy();
      resolve(true);
    });
    sock.once("error", () => resolve(false));
  });
}

t.test("the public port without FLOCK_METRICS_TOKEN: /metrics is not found", async (t) => {
  const node = await startTestNode(t, { engine: "memory" });
  t.equal(node.metricsPort, undefined, "no metrics listener unless FLOCK_METRICS_PORT is set");
  await call(node.url, "GET", "/healthz");
  const r = await call(node.url, "GET", "/metrics");
  t.equal(r.status, 404);
  t.same(r.body, { error: "not_found", message: "no route for GET /metrics" }, "as a route that does not exist");
  t.notMatch(r.text, /flock_/);
  const head = await fetch(`${node.url}/metrics`, { method: "HEAD" });
  t.equal(head.status, 404, "HEAD too");
  const withBearer = await call(node.url, "GET", "/metrics", { token: TOKEN });
  t.equal(withBearer.status, 404, "a bearer opens nothing when no token is configured");
});

t.test("the public port with FLOCK_METRICS_TOKEN: 401 without the bearer, 200 with it", async (t) => {
  const node = await startTestNode(t, { engine: "memory", env: { FLOCK_METRICS_TOKEN: TOKEN } });
  const none = await call(node.url, "GET", "/metrics");
  t.equal(none.status, 401);
  t.equal(none.body.error, "unauthorized");
  t.notMatch(none.text, /flock_/);
  t.equal((await call(node.url, "GET", "/metrics", { token: `${TOKEN}x` })).status, 401, "a wrong token");
  const ok = await call(node.url, "GET", "/metrics", { token: TOKEN });
  t.equal(ok.status, 200);
  t.match(ok.text, /flock_http_requests_total\{method="GET",route="\/metrics",status="401"\} 2/);
});

t.test("the metrics listener answers on 127.0.0.1 without a token, and only /metrics", async (t) => {
  // the token set too: it guards the public port, never the listener
  const node = await startTestNode(t, {
    engine: "memory",
    env: { FLOCK_METRICS_PORT: "0", FLOCK_METRICS_TOKEN: TOKEN },
  });
  t.equal(node.config.FLOCK_METRICS_HOST, "127.0.0.1", "loopback by default");
  t.type(node.metricsPort, "number");
  t.not(node.metricsPort, node.port, "a port of its own");
  const metricsUrl = `http://127.0.0.1:${node.metricsPort}`;

  await registerAgent(node.url, "m");
  await call(node.url, "GET", "/v1/agents/me");
  const m = await call(metricsUrl, "GET", "/metrics");
  t.equal(m.status, 200);
  t.match(m.headers.get("content-type"), /^text\/plain/);
  t.equal(m.headers.get("cache-control"), "no-store");
  t.equal(m.headers.get("x-content-type-options"), "nosniff");
  t.match(
    m.text,
    /flock_http_requests_total\{method="POST",route="\/v1\/agents\/register",status="201"\} 1/,
    "the public port's traffic",
  );
  t.match(m.text, /flock_http_requests_total\{method="GET",route="\/v1\/agents\/me",status="401"\} 1/);
  t.match(m.text, /flock_process_resident_memory_bytes/);
  t.equal((await call(metricsUrl, "GET", "/metrics?name[]=x")).status, 200, "a query is ignored");
  const head = await fetch(`${metricsUrl}/metrics`, { method: "HEAD" });
  t.equal(head.status, 200);
  t.equal(await head.text(), "", "HEAD: no body");

  const other = await call(metricsUrl, "GET", "/v1/agents/me");
  t.equal(other.status, 404, "the API is not on the metrics listener");
  t.equal(other.body.error, "not_found");
  t.equal((await call(metricsUrl, "GET", "/healthz")).status, 404);
  const post = await call(metricsUrl, "POST", "/metrics", { json: {} });
  t.equal(post.status, 405);
  t.equal(post.headers.get("allow"), "GET, HEAD");
});

t.test("closing the node closes the metrics listener, a kept-alive scrape connection included", async (t) => {
  const node = await startTestNode(t, { engine: "memory", env: { FLOCK_METRICS_PORT: "0" } });
  const port = node.metricsPort!;
  // fetch keeps its connection alive: the close must not wait for it
  t.equal(await fetch(`http://127.0.0.1:${port}/metrics`).then(async (r) => (await r.text(), r.status)), 200);
  t.ok(await accepts(port), "listening");
  const started = performance.now();
  await node.close();
  t.ok(performance.now() - started < 5000, "closed without waiting on the kept-alive connection");
  t.notOk(await accepts(port), "no longer listening");
});

t.test("a metrics port in use stops the start naming it", async (t) => {
  const first = await startTestNode(t, { engine: "memory", env: { FLOCK_METRICS_PORT: "0" } });
  await t.rejects(
    // the same schema: a start that fails leaves no schema of its own behind
    startTestNode(t, {
      engine: "memory",
      schema: first.schema,
      env: { FLOCK_METRICS_PORT: String(first.metricsPort) },
    }),
    new RegExp(`cannot listen for metrics on 127\\.0\\.0\\.1:${first.metricsPort} \\(EADDRINUSE\\)`),
  );
});
