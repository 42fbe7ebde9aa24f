import t from "tap";
import { call, registerAgent } from "./helpers/http.ts";
import { startTestNode } from "./helpers/node.ts";

t.test("healthz, readyz and metrics", async (t) => {
  // /metrics on the metrics listener (the public port answers it only behind FLOCK_METRICS_TOKEN: metrics-listener.test.ts)
  const node = await startTestNode(t, { env: { FLOCK_METRICS_PORT: "0" } });
  const h = await call(node.url, "GET", "/healthz");
  t.equal(h.status, 200);
  t.same(h.body, { status: "ok" });
  const r = await call(node.url, "GET", "/readyz");
  t.equal(r.status, 200);
  t.same(r.body.checks, { postgres: "ok", redis: "ok" });

  await registerAgent(node.url, "m");
  await call(node.url, "GET", "/v1/agents/me");
  const m = await call(`http://127.0.0.1:${node.metricsPort}`, "GET", "/metrics");
  t.equal(m.status, 200);
  t.match(m.headers.get("content-type"), /text\/plain/);
  t.match(m.text, /flock_http_requests_total\{method="POST",route="\/v1\/agents\/register",status="201"\} 1/);
  t.match(m.text, /flock_http_requests_total\{method="GET",route="\/v1\/agents\/me",status="401"\} 1/);
  t.match(
    m.text,
    /flock_http_request_duration_seconds_bucket\{le="0\.005",method="POST",route="\/v1\/agents\/register",status="201"\}/,
  );
  t.match(m.text, /flock_process_resident_memory_bytes/);
});

t.test("readyz answers 503 unavailable when Postgres is gone", async (t) => {
  const node = await startTestNode(t, { engine: "memory" });
  t.equal((await call(node.url, "GET", "/readyz")).status, 200);
  // The node's real Postgres client loses its connections for good (no stand-in: the check meets the real error).
  await node.svc.sql.end({ timeout: 1 });
  const r = await call(node.url, "GET", "/readyz");
  t.equal(r.status, 503);
  t.equal(r.body.error, "unavailable");
  t.match(r.body.checks.postgres, /error/);
});

t.test("every response carries a request id; a sane incoming one is echoed", async (t) => {
  const node = await startTestNode(t, { engine: "memory" });
  const a = await call(node.url, "GET", "/healthz");
  t.match(a.headers.get("x-request-id"), /^[0-9a-f]{8}-[0-9a-z]+$/);
  const b = await call(node.url, "GET", "/healthz", { headers: { "x-request-id": "trace-123" } });
  t.equal(b.headers.get("x-request-id"), "trace-123");
});
