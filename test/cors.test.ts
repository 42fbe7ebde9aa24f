// CORS: a preflight OPTIONS on any /v1 path answers 204 with the allowed methods, headers and a max-age; every
// /v1 answer, errors included, carries Access-Control-Allow-Origin per FLOCK_CORS_ORIGINS and exposes the headers
// a client reads; the WebSocket upgrade refuses a page origin not on the list (403).
import t from "tap";
import WebSocket from "ws";
import { loadConfig } from "../runtime/config.ts";
import { call, randomIp, registerAgent } from "./helpers/http.ts";
import { startTestNode } from "./helpers/node.ts";

const EXPOSED = [
  "retry-after",
  "ratelimit",
  "ratelimit-policy",
  "payment-required",
  "payment-response",
  "link",
  "etag",
];
const list = (h: string | null) => (h ?? "").split(",").map((s) => s.trim().toLowerCase());

/** Opens /v1/ws (optionally from a page origin): the upgrade's status (101 when it opened). */
function upgradeStatus(url: string, token: string, origin?: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(`${url.replace(/^http/, "ws")}/v1/ws`, ["flock.json"], {
      headers: { authorization: `Bearer ${token}` },
      ...(origin ? { origin } : {}),
    });
    ws.on("open", () => {
      ws.close();
      resolve(101);
    });
    ws.on("unexpected-response", (_req, res) => {
      resolve(res.statusCode ?? 0);
      res.resume();
      ws.terminate();
    });
    ws.on("error", reject);
  });
}

t.test("CORS with the default policy (*)", async (t) => {
  const node = await startTestNode(t, { engine: "memory" });
  const origin = "http://app.example:5173";

  t.test("a preflight answers 204 with methods, headers and max-age", async (t) => {
    for (const path of ["/v1/moments", "/v1/messages/pending", "/v1/moments/moment_1/like", "/v1/no/such/route"]) {
      const r = await call(node.url, "OPTIONS", path, {
        headers: {
          origin,
          "access-control-request-method": "POST",
          "access-control-request-headers": "authorization, content-type",
        },
      });
      t.equal(r.status, 204, path);
      t.equal(r.text, "");
      t.equal(r.headers.get("access-control-allow-origin"), "*");
      const methods = list(r.headers.get("access-control-allow-methods"));
      for (const m of ["get", "post", "patch", "delete"]) t.ok(methods.includes(m), `${path} allows ${m}`);
      const allowed = list(r.headers.get("access-control-allow-headers"));
      for (const h of ["authorization", "content-type", "payment-signature", "x-payment"])
        t.ok(allowed.includes(h), `${path} allows ${h}`);
      t.ok(Number(r.headers.get("access-control-max-age")) >= 600, "a max-age of at least 10 minutes");
    }
  });

  t.test("every /v1 answer carries the origin and exposed headers, errors too", async (t) => {
    const a = await registerAgent(node.url, "cors");
    const answers = [
      await call(node.url, "POST", "/v1/agents/register", {
        json: { display_name: "x" },
        headers: { origin, "x-forwarded-for": randomIp() },
      }),
      await call(node.url, "GET", "/v1/moments/feed", { token: a.token, headers: { origin } }),
      await call(node.url, "GET", "/v1/agents/me", { headers: { origin } }), // 401
      await call(node.url, "GET", "/v1/no/such/route", { headers: { origin } }), // 404
      await call(node.url, "PUT", "/v1/agents/me", { token: a.token, headers: { origin } }), // 405
      await call(node.url, "POST", "/v1/moments", {
        token: a.token,
        body: "x",
        headers: { origin, "content-type": "text/plain" },
      }), // 415
    ];
    t.same(
      answers.map((r) => r.status),
      [201, 200, 401, 404, 405, 415],
    );
    for (const r of answers) {
      t.equal(r.headers.get("access-control-allow-origin"), "*", `${r.status} has Allow-Origin`);
      const exposed = list(r.headers.get("access-control-expose-headers"));
      for (const h of EXPOSED) t.ok(exposed.includes(h), `${r.status} exposes ${h}`);
    }
    t.ok(answers[0]!.headers.get("ratelimit-policy"), "the exposed RateLimit-Policy is there to read");
  });

  t.test("paths outside /v1 are not cross-origin", async (t) => {
    const r = await call(node.url, "GET", "/healthz", { headers: { origin } });
    t.equal(r.status, 200);
    t.equal(r.headers.get("access-control-allow-origin"), null);
  });

  t.test("the WebSocket opens from any origin", async (t) => {
    const a = await registerAgent(node.url, "ws");
    t.equal(await upgradeStatus(node.url, a.token, "http://anything.example"), 101);
    t.equal(await upgradeStatus(node.url, a.token), 101);
  });
});

t.test("CORS with a list of origins", async (t) => {
  const node = await startTestNode(t, {
    engine: "memory",
    env: { FLOCK_CORS_ORIGINS: "http://app.example:5173, https://web.example" },
  });
  const a = await registerAgent(node.url, "list");

  t.test("a listed origin is echoed, with Vary: Origin", async (t) => {
    for (const origin of ["http://app.example:5173", "https://web.example"]) {
      const r = await call(node.url, "GET", "/v1/agents/me", { token: a.token, headers: { origin } });
      t.equal(r.status, 200);
      t.equal(r.headers.get("access-control-allow-origin"), origin);
      t.match(r.headers.get("vary") ?? "", /Origin/);
      const pre = await call(node.url, "OPTIONS", "/v1/agents/me", {
        headers: { origin, "access-control-request-method": "PATCH" },
      });
      t.equal(pre.status, 204);
      t.equal(pre.headers.get("access-control-allow-origin"), origin);
      t.ok(list(pre.headers.get("access-control-allow-methods")).includes("patch"));
    }
  });

  t.test("another origin gets no Allow-Origin, so the browser refuses", async (t) => {
    for (const origin of ["http://evil.example", "http://app.example:5174", "https://app.example:5173"]) {
      const r = await call(node.url, "GET", "/v1/agents/me", { token: a.token, headers: { origin } });
      t.equal(r.headers.get("access-control-allow-origin"), null, origin);
      t.match(r.headers.get("vary") ?? "", /Origin/);
      const pre = await call(node.url, "OPTIONS", "/v1/agents/me", {
        headers: { origin, "access-control-request-method": "GET" },
      });
      t.equal(pre.status, 204);
      t.equal(pre.headers.get("access-control-allow-origin"), null);
      t.equal(pre.headers.get("access-control-allow-methods"), null);
    }
  });

  t.test("the WebSocket upgrade refuses an origin not on the list", async (t) => {
    t.equal(await upgradeStatus(node.url, a.token, "http://evil.example"), 403);
    t.equal(await upgradeStatus(node.url, a.token, "https://web.example"), 101);
    t.equal(await upgradeStatus(node.url, a.token), 101, "a client outside a browser sends no Origin");
  });
});

t.test("FLOCK_CORS_ORIGINS must be * or origins", async (t) => {
  t.throws(
    () => loadConfig({ FLOCK_CORS_ORIGINS: "http://a.example/app" }),
    /FLOCK_CORS_ORIGINS: "http:\/\/a.example\/app" is not an origin/,
  );
  t.throws(() => loadConfig({ FLOCK_CORS_ORIGINS: "a.example" }), /is not an origin/);
  t.equal(loadConfig({}).FLOCK_CORS_ORIGINS.any, true);
  t.same(
    [...loadConfig({ FLOCK_CORS_ORIGINS: "HTTP://A.example:80,https://b.example/" }).FLOCK_CORS_ORIGINS.origins],
    ["http://a.example", "https://b.example"],
  );
});
