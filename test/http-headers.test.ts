// Response headers every client can rely on: nosniff everywhere, no-store where a token or a principal's data is
// in play, /metrics behind a bearer token when one is configured (not found without one), and a /readyz that names no
// backend's error.
import { connect } from "node:net";
import t from "tap";
import WebSocket from "ws";
import { call, randomIp, registerAgent } from "./helpers/http.ts";
import { startTestNode } from "./helpers/node.ts";
import { chooseUws, thisPlatform, UWS_CURRENT } from "../runtime/uws.ts";

t.test(
  "X-Content-Type-Options: nosniff on every response; no-store on authenticated and token-bearing ones",
  async (t) => {
    const node = await startTestNode(t, { engine: "memory" });
    const a = await registerAgent(node.url, "h");
    const up = await fetch(`${node.url}/v1/files/upload?name=n.txt`, {
      method: "POST",
      body: "hello",
      headers: { authorization: `Bearer ${a.token}`, "content-type": "text/plain", "x-forwarded-for": randomIp() },
    });
    const file = (await up.json()) as { id: string };
    const cases: [string, string, { token?: string; json?: unknown; headers?: Record<string, string> }, boolean][] = [
      // method, path, options, no-store expected
      ["GET", "/healthz", {}, false],
      ["GET", "/readyz", {}, false],
      ["GET", "/metrics", {}, false],
      ["GET", "/v1/openapi.json", {}, false],
      ["GET", "/nowhere", {}, false],
      ["PUT", "/v1/agents/me", { token: a.token }, true],
      ["OPTIONS", "/v1/agents/me", {}, false],
      [
        "POST",
        "/v1/agents/register",
        { json: { display_name: "x" }, headers: { "x-forwarded-for": randomIp() } },
        true,
      ],
      ["POST", "/v1/agents/register", { json: { display_name: 5 }, headers: { "x-forwarded-for": randomIp() } }, true],
      ["GET", "/v1/agents/me", { token: a.token }, true],
      ["HEAD", "/v1/agents/me", { token: a.token }, true],
      ["GET", "/v1/agents/me", {}, true],
      ["GET", `/v1/files/${file.id}`, { token: a.token }, true],
      ["GET", "/v1/messages/pending?timeout=0", { token: a.token }, true],
    ];
    for (const [method, path, opts, noStore] of cases) {
      const r = await call(node.url, method, path, opts);
      t.equal(r.headers.get("x-content-type-options"), "nosniff", `${method} ${path} ${r.status}: nosniff`);
      if (noStore) t.equal(r.headers.get("cache-control"), "no-store", `${method} ${path} ${r.status}: no-store`);
      else t.not(r.headers.get("cache-control"), "no-store", `${method} ${path} ${r.status}: cacheable as it says`);
    }
    const reg = await call(node.url, "POST", "/v1/agents/register", {
      json: { display_name: "y" },
      headers: { "x-forwarded-for": randomIp() },
    });
    t.ok(reg.body.token, "the register answer carries a token");
    t.equal(reg.headers.get("cache-control"), "no-store");

    // a refused WebSocket upgrade is an HTTP answer too
    const refused = await new Promise<{ status: number; nosniff: string | undefined }>((resolve) => {
      const ws = new WebSocket(`${node.url.replace("http", "ws")}/v1/ws`, {
        headers: { authorization: "Bearer am_nope" },
      });
      ws.on("error", () => {});
      ws.on("unexpected-response", (_req, res) => {
        resolve({ status: res.statusCode ?? 0, nosniff: res.headers["x-content-type-options"] as string | undefined });
        ws.terminate();
      });
      ws.on("open", () => {
        resolve({ status: 101, nosniff: undefined });
        ws.close();
      });
    });
    t.equal(refused.status, 401);
    t.equal(refused.nosniff, "nosniff", "the refused upgrade carries nosniff");
  },
);

t.test("/metrics behind FLOCK_METRICS_TOKEN", async (t) => {
  const token = "metrics-secret-0123456789";
  const node = await startTestNode(t, { engine: "memory", env: { FLOCK_METRICS_TOKEN: token } });
  const none = await call(node.url, "GET", "/metrics");
  t.equal(none.status, 401);
  t.equal(none.body.error, "unauthorized");
  t.match(none.headers.get("www-authenticate"), /^Bearer/);
  t.notMatch(none.text, /flock_http_requests_total/);
  t.equal(
    (await call(node.url, "GET", "/metrics", { token: "metrics-secret-012345678X" })).status,
    401,
    "a wrong token",
  );
  t.equal((await call(node.url, "GET", "/metrics", { headers: { authorization: token } })).status, 401, "not a bearer");
  const ok = await call(node.url, "GET", "/metrics", { token });
  t.equal(ok.status, 200);
  t.match(ok.text, /flock_http_requests_total/);
  t.equal(ok.headers.get("cache-control"), "no-store");
  t.equal((await call(node.url, "GET", "/healthz")).status, 200, "the other probes stay open");
});

t.test("/metrics without FLOCK_METRICS_TOKEN: not served on the public port", async (t) => {
  const node = await startTestNode(t, { engine: "memory" });
  const r = await call(node.url, "GET", "/metrics");
  t.equal(r.status, 404);
  t.equal(r.body.error, "not_found");
  t.notMatch(r.text, /flock_http_requests_total/);
});

t.test("a public /readyz names the failing backend, never its error", async (t) => {
  const node = await startTestNode(t, { engine: "memory" });
  await node.svc.sql.end({ timeout: 1 });
  const r = await call(node.url, "GET", "/readyz");
  t.equal(r.status, 503);
  t.same(r.body, { error: "unavailable", message: "not ready", checks: { postgres: "error", memory: "ok" } });
  t.notMatch(r.text, /CONNECTION|ECONN|closed|ended|postgres:\/\//i);
});

/** Sends `request` on a raw socket; answers what came back within `ms` and whether the server closed. */
function raw(port: number, request: string, ms: number): Promise<{ text: string; closed: boolean; elapsed: number }> {
  return new Promise((resolve) => {
    const started = Date.now();
    const sock = connect(port, "127.0.0.1");
    let text = "";
    const done = (closed: boolean) => {
      clearTimeout(timer);
      sock.destroy();
      resolve({ text, closed, elapsed: Date.now() - started });
    };
    const timer = setTimeout(() => done(false), ms);
    sock.on("data", (b) => {
      text += b.toString("latin1");
      if (/\r\n\r\n/.test(text)) done(false);
    });
    sock.on("close", () => done(true));
    sock.on("error", () => done(true));
    sock.write(request);
  });
}

// Which uWebSockets.js build serves here (runtime/uws.ts): v20.57 wherever it loads (Node 20-25; on Linux, glibc >=
// 2.38), v20.30 for Node 20 on an older glibc.
const choice = chooseUws(thisPlatform());
const current = "package" in choice && choice.package === UWS_CURRENT;

t.test("what the uWebSockets.js front end itself writes and parses", async (t) => {
  const node = await startTestNode(t, { engine: "memory" });
  const port = node.port;
  const r = await raw(port, "GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n", 2000);
  t.match(r.text, /^HTTP\/1\.1 200/);
  t.match(r.text, /\r\nX-Content-Type-Options: nosniff\r\n/i);
  // Both published builds write this header themselves (uWS is built without UWS_HTTPRESPONSE_NO_WRITEMARK) and
  // export no switch for it: a documented fact (README, docs/ARCHITECTURE.md), checked here so a build that drops it
  // is noticed.
  t.match(r.text, /\r\nuWebSockets: 20\r\n/i, "the binding's own uWebSockets: 20 header");

  const targets = [
    "GET http://x/healthz HTTP/1.1\r\nHost: x\r\n\r\n",
    "OPTIONS * HTTP/1.1\r\nHost: x\r\n\r\n",
    "GET /healthz HTTP/1.0\r\n\r\n",
  ];
  if (current) {
    // v20.57 answers an absolute-form target, "*" and HTTP/1.0 at once (505: Flock routes origin-form paths only)
    for (const req of targets) {
      const a = await raw(port, req, 1500);
      t.match(a.text, /^HTTP\/1\.1 [2-5]\d\d /, `${req.split("\r\n")[0]} answered`);
      t.ok(a.elapsed < 1000, `${req.split("\r\n")[0]} answered in ${a.elapsed} ms`);
    }
  } else {
    // v20.30's request-line parser reads only origin-form HTTP/1.1 targets: it takes the others for an incomplete
    // request and holds them until its idle time-out, with no answer (the documented limit of Node 20 on glibc < 2.38)
    for (const req of targets) {
      const a = await raw(port, req, 1500);
      t.equal(a.text, "", `${req.split("\r\n")[0]}: no answer on v20.30`);
    }
  }
  // an origin-form request on a new connection is still served
  t.match((await raw(port, "GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n", 2000)).text, /^HTTP\/1\.1 200/);
});
