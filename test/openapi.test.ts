// The published contract: /v1/openapi.json passes an independent validator (@apidevtools/swagger-parser), names
// every mounted route (and no other), and describes what the server really answers: every route is driven over
// real HTTP on a running node, and each answer's status must be one the document lists for that operation, with a
// body valid against the document's schema for that status (compiled back from the served document's JSON Schema
// with zod's fromJSONSchema) and the headers it promises. /v1/asyncapi.json describes the frames a real WebSocket
// session carries; /docs serves the reference page with its renderer from the same origin, under a CSP of 'self'.
import { createECDH } from "node:crypto";
import { mkdtemp, rm } from "node:fs/promises";
import { createServer } from "node:http";
import { type AddressInfo, connect } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import SwaggerParser from "@apidevtools/swagger-parser";
import { chromium } from "playwright-core";
import { exportJWK, generateKeyPair, SignJWT } from "jose";
import t from "tap";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import WebSocket from "ws";
import { z } from "zod";
import { ERROR_STATUS } from "../runtime/errors.ts";
import { POLICIES } from "../runtime/limits/policies.ts";
import { ERROR_CODES } from "../schema/errors.ts";
import { openApiPath, routeKey } from "../schema/openapi/document.ts";
import { ROUTE_DOCS } from "../schema/openapi/routes.ts";
import { everyRoute } from "./helpers/fuzz.ts";
import { signInWithWallet } from "./helpers/humans.ts";
import { SoftAuthenticator } from "./helpers/soft-authenticator.ts";
import { call, randomIp, type Registered, registerAgent, type Res } from "./helpers/http.ts";
import { startTestNode } from "./helpers/node.ts";
import { grantModerator } from "../runtime/moderation/moderation-store.ts";
import { until } from "./helpers/wait.ts";
import { CHROMIUM_OPTIONS, NO_BROWSER } from "./helpers/web.ts";

type Json = { [key: string]: unknown };

/** A JSON Schema of the document compiled back to zod, its component refs resolved against the document. */
function compiler(doc: Json, prefix: string) {
  const components = (doc["components"] as { schemas: Json }).schemas;
  const defs = JSON.parse(JSON.stringify(components).replaceAll(`"${prefix}`, '"#/$defs/')) as Json;
  const cache = new Map<string, z.ZodType>();
  return (schema: Json): z.ZodType => {
    const text = JSON.stringify(schema).replaceAll(`"${prefix}`, '"#/$defs/');
    let out = cache.get(text);
    if (!out) {
      out = z.fromJSONSchema({
        $schema: "https://json-schema.org/draft/2020-12/schema",
        ...(JSON.parse(text) as Json),
        $defs: defs,
      } as never);
      cache.set(text, out);
    }
    return out;
  };
}

/** A request whose head declares a body it never sends (fetch will not), read to the server's answer. */
async function rawRequest(base: string, line: string, headers: Record<string, string>): Promise<Res> {
  const url = new URL(base);
  const socket = connect(Number(url.port), url.hostname);
  const head = `${line} HTTP/1.1\r\nhost: ${url.host}\r\n${Object.entries(headers)
    .map(([k, v]) => `${k}: ${v}\r\n`)
    .join("")}\r\n`;
  socket.write(head);
  const chunks: Buffer[] = [];
  socket.on("data", (c: Buffer) => chunks.push(c));
  await new Promise<void>((resolve, reject) => socket.on("close", () => resolve()).on("error", reject));
  const raw = Buffer.concat(chunks).toString("utf8");
  const [top, text = ""] = raw.split("\r\n\r\n", 2) as [string, string?];
  const [status, ...lines] = top.split("\r\n");
  const out = new Headers();
  for (const l of lines) out.append(l.slice(0, l.indexOf(":")), l.slice(l.indexOf(":") + 1).trim());
  return { status: Number(status!.split(" ")[1]), headers: out, body: text, text };
}

/** A browser's push key: an uncompressed point of P-256. */
function browserKey(): Buffer {
  const ecdh = createECDH("prime256v1");
  return ecdh.generateKeys();
}

const ERROR_STATUSES_TO_SEE = [400, 401, 402, 403, 404, 409, 413, 415, 429];
/** The public port serves /metrics only behind this bearer (FLOCK_METRICS_TOKEN). */
const METRICS_TOKEN = "openapi-metrics-0123456789";

t.test("the OpenAPI document and real answers of every route", async (t) => {
  const jwk = await generateKeyPair("ES256", { extractable: true });
  const jwks = createServer((_req, res) => {
    void exportJWK(jwk.publicKey).then((k) => {
      res.writeHead(200, { "content-type": "application/json" });
      res.end(JSON.stringify({ keys: [{ ...k, kid: "k1", alg: "ES256", use: "sig" }] }));
    });
  });
  await new Promise<void>((resolve) => jwks.listen(0, "127.0.0.1", resolve));
  t.teardown(() => new Promise<void>((resolve) => jwks.close(() => resolve())));
  const jwksUrl = `http://127.0.0.1:${(jwks.address() as AddressInfo).port}/.well-known/jwks.json`;

  const node = await startTestNode(t, {
    engine: "memory",
    env: {
      PRIVY_APP_ID: "flock-openapi-test",
      PRIVY_JWKS_URL: jwksUrl,
      FLOCK_METRICS_TOKEN: METRICS_TOKEN,
      FLOCK_WEBHOOK_ALLOW_PRIVATE: "1",
    },
  });
  const base = node.url;
  // a webhook receiver on this machine (the node allows private addresses): every request taken
  const receiver = createServer((_req, res) => res.writeHead(204).end());
  await new Promise<void>((resolve) => receiver.listen(0, "127.0.0.1", resolve));
  t.teardown(() => new Promise<void>((resolve) => receiver.close(() => resolve())));
  const receiverUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`;

  const served = await call<Json>(base, "GET", "/v1/openapi.json");
  t.equal(served.status, 200);
  const doc = served.body;
  await t.resolves(
    SwaggerParser.validate(structuredClone(doc) as never),
    "swagger-parser validates the served document",
  );
  t.equal(doc["openapi"], "3.1.1");

  const routes = everyRoute();
  const paths = doc["paths"] as Record<string, Record<string, Json>>;
  // every route that creates something takes Idempotency-Key, and says what it answers with it
  const creating = routes
    .filter((r) => r.idempotent)
    .map((r) => `${r.method} ${r.path}`)
    .sort();
  t.same(
    creating,
    [
      "POST /v1/files/upload",
      "POST /v1/friends/request",
      "POST /v1/groups",
      "POST /v1/groups/:id/messages",
      "POST /v1/messages",
      "POST /v1/moments",
      "POST /v1/moments/:id/comments",
    ],
    "the creating routes are idempotent",
  );
  for (const r of routes.filter((x) => x.idempotent)) {
    const op = paths[r.path.replace(/:([A-Za-z_]+)/g, "{$1}")]![r.method.toLowerCase()] as {
      parameters: { name: string; in: string }[];
      responses: Record<string, unknown>;
    };
    t.ok(
      op.parameters.some((p) => p.name === "Idempotency-Key" && p.in === "header"),
      `${r.method} ${r.path}: the header`,
    );
    t.ok(op.responses["409"] && op.responses["422"], `${r.method} ${r.path}: 409 and 422`);
  }
  t.same(
    routes.map(routeKey).filter((k) => !ROUTE_DOCS[k]),
    [],
    "every mounted route is in schema/openapi/routes.ts",
  );
  t.same(
    Object.keys(ROUTE_DOCS).filter((k) => !routes.some((r) => routeKey(r) === k)),
    [],
    "the table names no route that is not mounted",
  );
  t.same(
    routes.filter((r) => !paths[openApiPath(r.path)]?.[r.method.toLowerCase()]).map(routeKey),
    [],
    "every mounted route is an operation of the document",
  );
  const operations = Object.values(paths).reduce((n, p) => n + Object.keys(p).length, 0);
  t.equal(operations, routes.length, "and the document has no other");
  for (const r of routes) {
    const op = paths[openApiPath(r.path)]![r.method.toLowerCase()]!;
    const responses = op["responses"] as Record<string, Json>;
    if (r.auth !== "none") t.ok(responses["401"], `${routeKey(r)} documents 401`);
    if (r.limit)
      t.ok(
        (responses["429"]?.["headers"] as Json | undefined)?.["Retry-After"],
        `${routeKey(r)} documents 429 with Retry-After`,
      );
    if (r.body)
      t.ok(responses["400"] && responses["413"] && responses["415"], `${routeKey(r)} documents 400, 413, 415`);
    t.ok(responses["503"], `${routeKey(r)} documents 503`);
  }
  t.same([...ERROR_CODES].sort(), Object.keys(ERROR_STATUS).sort(), "the documented error codes are the catalogue's");
  const send = (paths["/v1/messages"]!["post"]!["responses"] as Record<string, Json>)["402"]!;
  t.ok((send["headers"] as Json)["PAYMENT-REQUIRED"], "a send documents 402 with PAYMENT-REQUIRED");

  // ---- every route, over HTTP, against the document ----
  const compile = compiler(doc, "#/components/schemas/");
  const succeeded = new Set<string>();
  const errorsSeen = new Set<number>();
  const problems: string[] = [];

  /** Checks one real answer of `method template` against the document; answers the response for chaining. */
  const check = <T>(method: string, template: string, r: Res<T>): Res<T> => {
    const key = `${method} ${template}`;
    const op = paths[openApiPath(template)]?.[method.toLowerCase()];
    if (!op) {
      problems.push(`${key}: not in the document`);
      return r;
    }
    const responses = op["responses"] as Record<string, Json>;
    const documented = responses[String(r.status)];
    const answer = documented ?? ([405, 500].includes(r.status) ? responses["default"] : undefined);
    if (!answer) {
      problems.push(`${key}: status ${r.status} is not documented (${r.text.slice(0, 200)})`);
      return r;
    }
    const type = r.headers.get("content-type") ?? "";
    const content = answer["content"] as Record<string, Json> | undefined;
    if (!content) {
      if (r.text !== "")
        problems.push(`${key} ${r.status}: documented without a body, answered ${r.text.slice(0, 100)}`);
    } else if (content["application/json"]) {
      if (!type.startsWith("application/json")) problems.push(`${key} ${r.status}: ${type}, documented as JSON`);
      else {
        const parsed = compile(content["application/json"]["schema"] as Json).safeParse(JSON.parse(r.text));
        if (!parsed.success)
          problems.push(
            `${key} ${r.status}: body does not match the document: ${JSON.stringify(parsed.error.issues).slice(0, 600)} in ${r.text.slice(0, 300)}`,
          );
      }
    } else if (
      !content["*/*"] &&
      !Object.keys(content).some((c) => type.startsWith(c.endsWith("/*") ? c.slice(0, -1) : c))
    ) {
      problems.push(`${key} ${r.status}: ${type}, documented as ${Object.keys(content).join(", ")}`);
    }
    const mustCarry: Record<number, string[]> = {
      401: ["www-authenticate"],
      402: ["payment-required"],
      429: ["retry-after"],
    };
    for (const h of mustCarry[r.status] ?? [])
      if (!r.headers.get(h)) problems.push(`${key} ${r.status}: no ${h} header`);
    if (
      r.status === 429 &&
      (op["responses"] as Record<string, Json>)["429"]?.["headers"] &&
      (responses["429"]!["headers"] as Json)["RateLimit"] &&
      !r.headers.get("ratelimit")
    ) {
      problems.push(`${key} 429: no RateLimit header`);
    }
    if (r.status < 300) succeeded.add(key);
    else errorsSeen.add(r.status);
    return r;
  };
  const as = (who: { token: string } | undefined, json?: unknown, headers: Record<string, string> = {}) => ({
    ...(who ? { token: who.token } : {}),
    ...(json !== undefined ? { json } : {}),
    headers: { "x-forwarded-for": randomIp(), ...headers },
  });
  const req = async <T = any>(method: string, template: string, path: string, opts: Parameters<typeof call>[3] = {}) =>
    check<T>(method, template, await call<T>(base, method, path, opts));

  // health and the reference
  for (const p of ["/healthz", "/readyz", "/v1/openapi.json", "/v1/asyncapi.json", "/docs", "/docs/init.js"])
    await req("GET", p, p);
  // the public port serves /metrics only behind FLOCK_METRICS_TOKEN (404 without one)
  await req("GET", "/metrics", "/metrics", { token: METRICS_TOKEN });
  const page = await call(base, "GET", "/docs");
  const assets = [...page.text.matchAll(/(?:src|href)="([^"]+)"/g)].map((m) => m[1]!);
  for (const a of assets.filter((a) => a.startsWith("/docs/assets/"))) {
    const [, , , version, file] = a.split("/");
    await req("GET", "/docs/assets/:version/:file", `/docs/assets/${version}/${file}`);
  }
  await req("GET", "/docs/assets/:version/:file", "/docs/assets/0.0.0/swagger-ui.css"); // another version: 404
  // the SDK reference (TypeDoc, built by npm run build:docs): its index, a page, a class's page, and 404s
  await req("GET", "/docs/sdk", "/docs/sdk");
  const modules = await req("GET", "/docs/sdk/:file", "/docs/sdk/modules.html");
  await req("GET", "/docs/sdk/:file", "/docs/sdk/nothing.html"); // 404
  const classPage =
    [...modules.text.matchAll(/href="(?:\.\/)?(classes\/[\w.-]+\.html|modules\/[\w.-]+\.html)"/g)].map(
      (m) => m[1]!,
    )[0] ?? "modules/index.html";
  await req("GET", "/docs/sdk/:dir/:file", `/docs/sdk/${classPage}`);
  await req("GET", "/docs/sdk/:dir/:file", "/docs/sdk/runtime/main.js"); // not a folder of the reference: 404
  // the web app: its page and the bundle it names (built by web/build.mjs)
  const app = await req("GET", "/", "/");
  for (const a of [...app.text.matchAll(/(?:src|href)="\/assets\/([^"]+)"/g)].map((m) => m[1]!))
    await req("GET", "/assets/:file", `/assets/${a}`);
  await req("GET", "/assets/:file", "/assets/nothing-00000000.js"); // 404
  // its service worker (web/sw.ts), a script at the root
  const worker = await req("GET", "/sw.js", "/sw.js");
  t.match(worker.headers.get("content-type"), /^text\/javascript/, "the service worker is a script");

  // agents
  const reg = await req(
    "POST",
    "/v1/agents/register",
    "/v1/agents/register",
    as(undefined, { display_name: "Doc bot", description: "checks the document" }),
  );
  const a: Registered = { id: reg.body.agent.id, token: reg.body.token, display_name: "Doc bot" };
  const b = await registerAgent(base, "Other bot");
  await req("POST", "/v1/agents/register", "/v1/agents/register", as(undefined, { display_name: "" })); // 400
  await req("GET", "/v1/agents/me", "/v1/agents/me", as(a));
  await req("GET", "/v1/agents/me", "/v1/agents/me", as(undefined)); // 401
  await req("PATCH", "/v1/agents/me", "/v1/agents/me", as(a, { description: "checks every answer" }));
  await req("PATCH", "/v1/agents/me", "/v1/agents/me", as(a, {}, { "content-type": "text/plain" })); // 415
  check(
    "PATCH",
    "/v1/agents/me",
    await rawRequest(base, "PATCH /v1/agents/me", {
      authorization: `Bearer ${a.token}`,
      "content-type": "application/json",
      "content-length": String(64 * 1024 * 1024),
    }),
  ); // 413
  await req("GET", "/v1/agents/:id", `/v1/agents/${b.id}`, as(a));
  await req("GET", "/v1/agents/:id", "/v1/agents/123", as(a)); // 404
  const rotated = await registerAgent(base, "Rotating bot");
  await req("POST", "/v1/agents/me/token", "/v1/agents/me/token", as(rotated));

  // the agent's webhook endpoint
  const hook = "/v1/agents/me/webhook";
  const hooked = await registerAgent(base, "Hooked bot");
  await req("PUT", hook, hook, as(hooked, { url: receiverUrl })); // 201
  await req("PUT", hook, hook, as(hooked, { url: receiverUrl, mode: "when_offline", offline_after: 30 })); // 200
  await req("PUT", hook, hook, as(hooked, { url: "ftp://example.com/" })); // 400
  await req("GET", hook, hook, as(hooked));
  await req("POST", `${hook}/rotate`, `${hook}/rotate`, as(hooked));
  await req("POST", `${hook}/test`, `${hook}/test`, as(hooked));
  await req("GET", `${hook}/deliveries`, `${hook}/deliveries`, as(hooked));
  await req("DELETE", hook, hook, as(hooked)); // 204
  await req("DELETE", hook, hook, as(hooked)); // 404

  // scoped, named tokens
  const minted = await req("POST", "/v1/tokens", "/v1/tokens", as(a, { name: "doc reader", scopes: ["read"] }));
  await req("POST", "/v1/tokens", "/v1/tokens", as(a, { name: "doc", scopes: ["nope"] })); // 400
  const reader: Registered = { ...a, token: minted.body.token };
  await req("GET", "/v1/tokens", "/v1/tokens", as(a));
  await req("GET", "/v1/tokens/current", "/v1/tokens/current", as(reader));
  await req("POST", "/v1/moments", "/v1/moments", as(reader, { content: "x", visibility: "public" })); // 403 scope
  await req("DELETE", "/v1/tokens/:id", `/v1/tokens/${minted.body.info.id}`, as(a));
  await req("DELETE", "/v1/tokens/:id", `/v1/tokens/${minted.body.info.id}`, as(a)); // 404

  // a paid agent: the marketplace lists it, a send without payment answers 402
  const payTo = privateKeyToAccount(generatePrivateKey()).address;
  const oracle = await registerAgent(base, "Oracle");
  await req(
    "PATCH",
    "/v1/agents/me",
    "/v1/agents/me",
    as(oracle, { x402_enabled: true, price: 0.05, pay_to: payTo, network: "eip155:196" }),
  );
  await req("GET", "/v1/agents/marketplace", "/v1/agents/marketplace", as(a));
  await req("GET", "/v1/agents/marketplace", "/v1/agents/marketplace?limit=0", as(a)); // 400
  await req("POST", "/v1/messages", "/v1/messages", as(a, { to: oracle.id, body: "a question" }));

  // humans: wallet sign-in (both steps), the identity provider
  const wallet = privateKeyToAccount(generatePrivateKey());
  const ch = await req(
    "POST",
    "/v1/auth/wallet-verify",
    "/v1/auth/wallet-verify",
    as(undefined, { address: wallet.address }),
  );
  const signed = await req(
    "POST",
    "/v1/auth/wallet-verify",
    "/v1/auth/wallet-verify",
    as(undefined, { message: ch.body.message, signature: await wallet.signMessage({ message: ch.body.message }) }),
  );
  const h: Registered = {
    id: signed.body.user.id,
    token: signed.body.token,
    display_name: signed.body.user.display_name,
  };
  const now = Math.floor(Date.now() / 1000);
  const idToken = await new SignJWT({ sid: "s1" })
    .setProtectedHeader({ alg: "ES256", kid: "k1", typ: "JWT" })
    .setIssuer("privy.io")
    .setAudience("flock-openapi-test")
    .setSubject("did:privy:openapi")
    .setIssuedAt(now)
    .setExpirationTime(now + 600)
    .sign(jwk.privateKey);
  await req("POST", "/v1/auth/privy-login", "/v1/auth/privy-login", as(undefined, { token: idToken }));
  await req("POST", "/v1/auth/privy-login", "/v1/auth/privy-login", as(undefined, { token: "not-a-jwt" })); // 401
  // passkeys, with an authenticator in Node (test/passkeys.test.ts drives Chromium's)
  const key = new SoftAuthenticator(base.replace("127.0.0.1", "localhost"));
  const po = await req(
    "POST",
    "/v1/auth/passkey/register-options",
    "/v1/auth/passkey/register-options",
    as(undefined, { display_name: "Key holder" }),
  );
  const pk = await req(
    "POST",
    "/v1/auth/passkey/register",
    "/v1/auth/passkey/register",
    as(undefined, { challenge_id: po.body.challenge_id, response: key.register(po.body.options) }),
  );
  const lo = await req("POST", "/v1/auth/passkey/login-options", "/v1/auth/passkey/login-options", as(undefined, {}));
  await req(
    "POST",
    "/v1/auth/passkey/login",
    "/v1/auth/passkey/login",
    as(undefined, { challenge_id: lo.body.challenge_id, response: key.assert(lo.body.options) }),
  );
  await req(
    "POST",
    "/v1/auth/passkey/login",
    "/v1/auth/passkey/login",
    as(undefined, { challenge_id: lo.body.challenge_id, response: key.assert(lo.body.options) }),
  ); // 401: used
  const pkUser = { token: pk.body.token as string };
  await req("GET", "/v1/users/me/passkeys", "/v1/users/me/passkeys", as(pkUser));
  await req("POST", "/v1/users/me/passkeys/options", "/v1/users/me/passkeys/options", as(h));
  const hk = await req("POST", "/v1/users/me/passkeys/options", "/v1/users/me/passkeys/options", as(h));
  const added = await req(
    "POST",
    "/v1/auth/passkey/register",
    "/v1/auth/passkey/register",
    as(undefined, { challenge_id: hk.body.challenge_id, response: key.register(hk.body.options) }),
  );
  const hKeys = await req(
    "GET",
    "/v1/users/me/passkeys",
    "/v1/users/me/passkeys",
    as({ token: added.body.token as string }),
  );
  await req(
    "DELETE",
    "/v1/users/me/passkeys/:id",
    `/v1/users/me/passkeys/${encodeURIComponent(hKeys.body.passkeys[0].id)}`,
    as(h),
  );
  await req("DELETE", "/v1/users/me/passkeys/:id", `/v1/users/me/passkeys/nope`, as(h)); // 404
  await req("GET", "/v1/users/me", "/v1/users/me", as(h));
  await req("GET", "/v1/users/me", "/v1/users/me", as(a)); // 403: humans only
  // Web Push: the key, a subscription kept (a public https endpoint: nothing is pushed to it here) and removed
  await req("GET", "/v1/push/key", "/v1/push/key");
  const pushSub = {
    endpoint: "https://push.example/send/openapi",
    keys: { p256dh: browserKey().toString("base64url"), auth: Buffer.alloc(16, 1).toString("base64url") },
  };
  await req("POST", "/v1/users/me/push-subscriptions", "/v1/users/me/push-subscriptions", as(h, pushSub));
  await req("POST", "/v1/users/me/push-subscriptions", "/v1/users/me/push-subscriptions", as(a, pushSub)); // 403
  await req("POST", "/v1/users/me/push-subscriptions", "/v1/users/me/push-subscriptions", as(h, { endpoint: "x" })); // 400
  const pushGone = { endpoint: pushSub.endpoint };
  await req("DELETE", "/v1/users/me/push-subscriptions", "/v1/users/me/push-subscriptions", as(h, pushGone));
  await req("DELETE", "/v1/users/me/push-subscriptions", "/v1/users/me/push-subscriptions", as(h, pushGone)); // 404
  await req("PATCH", "/v1/users/me", "/v1/users/me", as(h, { display_name: "Ada" }));
  // a second wallet for the person: the challenge, the signed answer, and a wallet that is someone else's (409)
  const h2 = await signInWithWallet(base);
  const second = privateKeyToAccount(generatePrivateKey());
  const link = await req(
    "POST",
    "/v1/users/me/wallets",
    "/v1/users/me/wallets",
    as(h, { address: second.address }, { "x-forwarded-for": randomIp() }),
  );
  await req(
    "POST",
    "/v1/users/me/wallets",
    "/v1/users/me/wallets",
    as(
      h,
      { message: link.body.message, signature: await second.signMessage({ message: link.body.message }) },
      { "x-forwarded-for": randomIp() },
    ),
  );
  const someoneElse = await req(
    "POST",
    "/v1/users/me/wallets",
    "/v1/users/me/wallets",
    as(h2, { address: second.address }, { "x-forwarded-for": randomIp() }),
  );
  await req(
    "POST",
    "/v1/users/me/wallets",
    "/v1/users/me/wallets",
    as(
      h2,
      { message: someoneElse.body.message, signature: await second.signMessage({ message: someoneElse.body.message }) },
      { "x-forwarded-for": randomIp() },
    ),
  ); // 409

  // moments
  const m = await req("POST", "/v1/moments", "/v1/moments", as(a, { content: "Rain at noon.", visibility: "public" }));
  await req("POST", "/v1/moments", "/v1/moments", as(a, { content: "x", visibility: "everyone" })); // 400
  await req("GET", "/v1/moments/feed", "/v1/moments/feed?limit=5", as(a));
  await req("GET", "/v1/moments/:id", `/v1/moments/${m.body.id}`, as(h));
  await req("GET", "/v1/moments/:id", "/v1/moments/moment_1", as(h)); // 404
  await req("POST", "/v1/moments/:id/like", `/v1/moments/${m.body.id}/like`, as(h));
  await req("DELETE", "/v1/moments/:id/like", `/v1/moments/${m.body.id}/like`, as(h));
  await req(
    "POST",
    "/v1/moments/:id/comments",
    `/v1/moments/${m.body.id}/comments`,
    as(h, { body: "Bring an umbrella." }),
  );
  await req("POST", "/v1/moments/:id/comments", `/v1/moments/${m.body.id}/comments`, as(b, { body: "And boots." }));
  await req("GET", "/v1/moments/:id/comments", `/v1/moments/${m.body.id}/comments?limit=1`, as(a));

  // friends
  const fr = await req("POST", "/v1/friends/request", "/v1/friends/request", as(a, { to: h.id }));
  await req("POST", "/v1/friends/request", "/v1/friends/request", as(a, { to: h.id })); // 202: to a person, already pending
  await req("GET", "/v1/friends/requests", "/v1/friends/requests", as(h));
  await req("POST", "/v1/friends/requests/:id/accept", `/v1/friends/requests/${fr.body.request.id}/accept`, as(h));
  await req("POST", "/v1/friends/request", "/v1/friends/request", as(a, { to: h.id })); // 409
  const fr2 = await req("POST", "/v1/friends/request", "/v1/friends/request", as(b, { to: a.id }));
  await req("POST", "/v1/friends/requests/:id/decline", `/v1/friends/requests/${fr2.body.request.id}/decline`, as(a));
  await req("GET", "/v1/friends", "/v1/friends", as(a));

  // messages and threads
  const sent = await req("POST", "/v1/messages", "/v1/messages", as(h, { to: a.id, body: "hello" }));
  await req("GET", "/v1/messages/pending", "/v1/messages/pending?timeout=0", as(a));
  await req("POST", "/v1/messages/:id/ack", `/v1/messages/${sent.body.id}/ack`, as(a));
  await req("PATCH", "/v1/messages/:id", `/v1/messages/${sent.body.id}`, as(h, { body: "hello again" }));
  await req("POST", "/v1/messages/:id/reactions", `/v1/messages/${sent.body.id}/reactions`, as(a, { emoji: "👍" }));
  await req("POST", "/v1/messages/:id/reactions", `/v1/messages/${sent.body.id}/reactions`, as(a, { emoji: "thumbs" })); // 400
  await req(
    "DELETE",
    "/v1/messages/:id/reactions/:emoji",
    `/v1/messages/${sent.body.id}/reactions/${encodeURIComponent("👍")}`,
    as(a),
  );
  const answer = await req(
    "POST",
    "/v1/messages",
    "/v1/messages",
    as(a, { to: h.id, body: "hello to you", reply_to: sent.body.id }),
  );
  if (answer.body?.reply_to?.id !== sent.body.id) problems.push("a reply's answer carries no quote");
  await req("PATCH", "/v1/messages/:id", `/v1/messages/${sent.body.id}`, as(a, { body: "not mine" })); // 403
  const doomed = await req("POST", "/v1/messages", "/v1/messages", as(h, { to: a.id, body: "oops" }));
  await req("DELETE", "/v1/messages/:id", `/v1/messages/${doomed.body.id}`, as(h));
  await req("PATCH", "/v1/messages/:id", `/v1/messages/${doomed.body.id}`, as(h, { body: "undo" })); // 409
  await req("DELETE", "/v1/messages/:id", `/v1/messages/${doomed.body.id}`, as(b)); // 404
  await req("POST", "/v1/messages/:id/ack", `/v1/messages/${sent.body.id}/ack`, as(b)); // 404
  await req("GET", "/v1/threads", "/v1/threads", as(a));
  await req("GET", "/v1/search/people", "/v1/search/people?q=Fore", as(a));
  await req("GET", "/v1/search/messages", "/v1/search/messages?q=hello", as(h));
  await req("GET", "/v1/search/messages", "/v1/search/messages?q=hello&before=nope", as(h)); // 400
  await req("GET", "/v1/threads/:id/messages", `/v1/threads/${sent.body.thread_id}/messages`, as(h));
  await req(
    "POST",
    "/v1/threads/:id/read",
    `/v1/threads/${sent.body.thread_id}/read`,
    as(a, { through: sent.body.id }),
  );
  await req(
    "POST",
    "/v1/threads/:id/read",
    `/v1/threads/${sent.body.thread_id}/read`,
    as(b, { through: sent.body.id }),
  ); // 404: not b's
  await req("GET", "/v1/threads/:id/reads", `/v1/threads/${sent.body.thread_id}/reads`, as(h));
  await req("GET", "/v1/threads/:id/reads", `/v1/threads/${sent.body.thread_id}/reads`, as(b)); // 404: not b's

  // groups
  const g = await req("POST", "/v1/groups", "/v1/groups", as(a, { name: "Forecasters", members: [h.id] }));
  const gid = g.body.group.id as string;
  await req("GET", "/v1/groups/:id", `/v1/groups/${gid}`, as(h));
  await req("POST", "/v1/groups/:id/members", `/v1/groups/${gid}/members`, as(a, { members: [b.id] }));
  await req("POST", "/v1/groups/:id/members", `/v1/groups/${gid}/members`, as(h, { members: [oracle.id] })); // 403: not the owner
  await req("POST", "/v1/groups/:id/messages", `/v1/groups/${gid}/messages`, as(b, { body: "Storm tonight." }));
  await req("DELETE", "/v1/groups/:id/members/:member", `/v1/groups/${gid}/members/${b.id}`, as(a));

  // files
  const f = await req("POST", "/v1/files/upload", "/v1/files/upload?name=note.txt", {
    ...as(a),
    body: "file body",
    headers: { "content-type": "text/plain", "x-forwarded-for": randomIp() },
  });
  await req("GET", "/v1/files/:id", `/v1/files/${f.body.id}`, as(a));
  await req("GET", "/v1/files/:id", `/v1/files/${f.body.id}`, as(b)); // 404
  // a picture: set from an uploaded image, then fetched without credentials, again with its tag, and a key nobody has
  const png = Buffer.from(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAQAAAC1HAwCAAAAC0lEQVR42mNkYAAAAAYAAjCB0C8AAAAASUVORK5CYII=",
    "base64",
  );
  const pic = await req("POST", "/v1/files/upload", "/v1/files/upload?name=me.png", {
    ...as(a),
    body: png as unknown as string,
    headers: { "content-type": "image/png", "x-forwarded-for": randomIp() },
  });
  const withPic = await req("PATCH", "/v1/agents/me", "/v1/agents/me", as(a, { avatar: pic.body.id }));
  const shown = await req("GET", "/v1/avatars/:key", withPic.body.agent.avatar_url);
  await req("GET", "/v1/avatars/:key", withPic.body.agent.avatar_url, {
    headers: { "if-none-match": shown.headers.get("etag")! },
  }); // 304
  await req("GET", "/v1/avatars/:key", "/v1/avatars/AAAAAAAAAAAAAAAAAAAAAA"); // 404

  // blocks and mutes (a third agent, so the others' contact stays)
  const pest = await registerAgent(base, "Pest bot");
  await req("POST", "/v1/blocks/:principal", `/v1/blocks/${pest.id}`, as(a));
  await req("POST", "/v1/blocks/:principal", `/v1/blocks/${a.id}`, as(a)); // 400: yourself
  await req("POST", "/v1/blocks/:principal", "/v1/blocks/99999999999", as(a)); // 404
  await req("GET", "/v1/blocks", "/v1/blocks?limit=5", as(a));
  await req("DELETE", "/v1/blocks/:principal", `/v1/blocks/${pest.id}`, as(a));
  await req("DELETE", "/v1/blocks/:principal", `/v1/blocks/${pest.id}`, as(a)); // 404
  await req("POST", "/v1/mutes/:principal", `/v1/mutes/${pest.id}`, as(a));
  await req("GET", "/v1/mutes", "/v1/mutes", as(a));
  await req("DELETE", "/v1/mutes/:principal", `/v1/mutes/${pest.id}`, as(a));
  await req("POST", "/v1/threads/:id/mute", `/v1/threads/${sent.body.thread_id}/mute`, as(h));
  await req("POST", "/v1/threads/:id/mute", `/v1/threads/${sent.body.thread_id}/mute`, as(b)); // 404: not b's
  await req("DELETE", "/v1/threads/:id/mute", `/v1/threads/${sent.body.thread_id}/mute`, as(h));

  await req("GET", "/v1/payments", "/v1/payments?direction=sent", as(a));
  await req("DELETE", "/v1/friends/:id", `/v1/friends/${h.id}`, as(a));
  await req("DELETE", "/v1/moments/:id", `/v1/moments/${m.body.id}`, as(a));
  const leaving = await registerAgent(base, "Leaving bot");
  await req("DELETE", "/v1/users/me", "/v1/users/me", as(leaving));

  // the MCP endpoint: initialize (an event stream of one answer), the session's open event stream, its end
  const mcpAgent = await registerAgent(base, "MCP bot");
  const sse = { accept: "application/json, text/event-stream" };
  const init = {
    jsonrpc: "2.0",
    id: 1,
    method: "initialize",
    params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "doc", version: "1" } },
  };
  const opened = await req("POST", "/v1/mcp", "/v1/mcp", as(mcpAgent, init, sse));
  const session = {
    "mcp-session-id": opened.headers.get("mcp-session-id") ?? "",
    "mcp-protocol-version": "2025-06-18",
  };
  await req(
    "POST",
    "/v1/mcp",
    "/v1/mcp",
    as(mcpAgent, { jsonrpc: "2.0", method: "notifications/initialized" }, { ...sse, ...session }),
  );
  const ac = new AbortController();
  const events = await fetch(`${base}/v1/mcp`, {
    headers: { authorization: `Bearer ${mcpAgent.token}`, accept: "text/event-stream", ...session },
    signal: ac.signal,
  });
  check("GET", "/v1/mcp", { status: events.status, headers: events.headers, body: undefined, text: "" });
  ac.abort();
  await req("DELETE", "/v1/mcp", "/v1/mcp", as(mcpAgent, undefined, session));
  await req("DELETE", "/v1/mcp", "/v1/mcp", as(mcpAgent, undefined, session)); // gone: 404

  // Server-Sent Events: a ticket, the stream opened with it and with the header, the used ticket again (401)
  const sseAgent = await registerAgent(base, "SSE bot");
  const ticket = await req("POST", "/v1/events/ticket", "/v1/events/ticket", as(sseAgent));
  const ways: [string, Record<string, string>][] = [
    [`?ticket=${ticket.body.ticket}`, {}],
    ["", { authorization: `Bearer ${sseAgent.token}` }],
  ];
  for (const [query, headers] of ways) {
    const stop = new AbortController();
    const stream = await fetch(`${base}/v1/events${query}`, { headers, signal: stop.signal });
    check("GET", "/v1/events", { status: stream.status, headers: stream.headers, body: undefined, text: "" });
    stop.abort();
  }
  await req("GET", "/v1/events", `/v1/events?ticket=${ticket.body.ticket}`, as(undefined));

  // reports and moderation
  const modr = await registerAgent(base, "Moderator");
  await grantModerator(node.svc.sql, modr.id);
  const noisy = await registerAgent(base, "Noisy");
  const spam = await req("POST", "/v1/moments", "/v1/moments", as(noisy, { content: "spam", visibility: "public" }));
  const rep = await req(
    "POST",
    "/v1/reports",
    "/v1/reports",
    as(a, { target: "moment", id: spam.body.id, reason: "spam" }),
  );
  await req("POST", "/v1/reports", "/v1/reports", as(a, { target: "moment", id: spam.body.id, reason: "spam" })); // 200
  await req("POST", "/v1/reports", "/v1/reports", as(a, { target: "moment", id: "moment_1", reason: "spam" })); // 404
  await req("GET", "/v1/moderation/reports", "/v1/moderation/reports", as(modr));
  await req("GET", "/v1/moderation/reports", "/v1/moderation/reports", as(a)); // 404
  await req(
    "POST",
    "/v1/moderation/reports/:id",
    `/v1/moderation/reports/${rep.body.report.id}`,
    as(modr, { status: "dismissed", reason: "fine" }),
  );
  await req(
    "POST",
    "/v1/moderation/removals",
    "/v1/moderation/removals",
    as(modr, { target: "moment", id: spam.body.id, reason: "spam" }),
  );
  await req(
    "POST",
    "/v1/moderation/suspensions",
    "/v1/moderation/suspensions",
    as(modr, { principals: [noisy.id], reason: "spam", remove_content: true }),
  );
  await req(
    "POST",
    "/v1/moderation/suspensions/lift",
    "/v1/moderation/suspensions/lift",
    as(modr, { principals: [noisy.id], reason: "appeal" }),
  );
  await req("GET", "/v1/moderation/audit", "/v1/moderation/audit", as(modr));

  // 429: one address registering past its limit
  const ip = randomIp();
  for (let i = 0; i <= POLICIES.register.limit; i++) {
    await req("POST", "/v1/agents/register", "/v1/agents/register", {
      json: { display_name: "flood" },
      headers: { "x-forwarded-for": ip },
    });
  }

  t.same(problems, [], "every answer is documented, with a body valid against the document");
  t.same(
    routes.map(routeKey).filter((k) => !succeeded.has(k)),
    [],
    "every route was checked with a real success",
  );
  t.same(
    ERROR_STATUSES_TO_SEE.filter((s) => !errorsSeen.has(s)),
    [],
    "and the error statuses were seen too",
  );
});

t.test("the AsyncAPI document describes the frames of a real WebSocket session", async (t) => {
  const node = await startTestNode(t, { engine: "memory" });
  const r = await call<Json>(node.url, "GET", "/v1/asyncapi.json");
  t.equal(r.status, 200);
  const doc = r.body;
  t.equal(doc["asyncapi"], "3.0.0");
  const components = doc["components"] as { messages: Record<string, { payload: Json }>; schemas: Json };
  const operations = doc["operations"] as Record<string, { action: string; messages: { $ref: string }[] }>;
  const names = (action: string) =>
    Object.values(operations)
      .filter((o) => o.action === action)
      .map((o) => o.messages[0]!.$ref.split("/").pop()!)
      .sort();
  t.same(names("receive"), ["AckFrame", "AuthFrame", "PingFrame", "TypingFrame"], "client frames");
  t.same(
    names("send"),
    [
      "AckedFrame",
      "ErrorFrame",
      "ExpiredFrame",
      "FriendRequestEvent",
      "FriendshipEvent",
      "MessageFrame",
      "MessageUpdateEvent",
      "MomentCountsEvent",
      "MomentEvent",
      "PongFrame",
      "PresenceFrame",
      "ReadEvent",
      "ReadyFrame",
      "TypingEvent",
      "WebhookDisabledFrame",
    ],
    "server frames",
  );
  const compile = compiler(doc, "#/components/schemas/");
  const serverFrame = z.union(
    names("send").map((n) => compile(components.messages[n]!.payload)) as unknown as [z.ZodType, z.ZodType],
  );
  const clientFrame = z.union(
    names("receive").map((n) => compile(components.messages[n]!.payload)) as unknown as [z.ZodType, z.ZodType],
  );

  const a = await registerAgent(node.url, "ws-a");
  const b = await registerAgent(node.url, "ws-b");
  const sent = await call(node.url, "POST", "/v1/messages", {
    token: b.token,
    json: { to: a.id, body: "over the socket" },
  });
  t.equal(sent.status, 201);
  const ws = new WebSocket(`${node.url.replace("http", "ws")}/v1/ws`);
  t.teardown(() => ws.close());
  const frames: Json[] = [];
  ws.on("message", (data) => frames.push(JSON.parse(String(data)) as Json));
  /** The first frame of `type`, once it has come. */
  const frame = async (type: string): Promise<Json> => {
    await until(() => frames.some((x) => x["type"] === type), { ms: 10_000, what: `a ${type} frame` });
    return frames.find((x) => x["type"] === type)!;
  };
  await new Promise<void>((resolve, reject) => ws.once("open", () => resolve()).once("error", reject));
  const out: Json[] = [{ type: "auth", token: a.token }];
  ws.send(JSON.stringify(out[0]));
  await frame("ready");
  const msg = await frame("message");
  const more: Json[] = [
    { type: "ack", id: (msg["message"] as Json)["id"], ref: "r1" },
    { type: "ping", ref: "p1" },
    { type: "ack", id: "msg_1", ref: "bad" },
  ];
  for (const f of more) ws.send(JSON.stringify(f));
  out.push(...more);
  await frame("pong");
  await frame("error");
  await frame("ack");
  // marking the thread read over HTTP: the reader's own connection hears the receipt
  const m = msg["message"] as Json;
  const marked = await call(node.url, "POST", `/v1/threads/${String(m["thread_id"])}/read`, {
    token: a.token,
    json: { through: m["id"] },
  });
  t.equal(marked.status, 200);
  await frame("read");
  // the sender edits it: the recipient's connection hears the message as it is now
  const edited = await call(node.url, "PATCH", `/v1/messages/${String(m["id"])}`, {
    token: b.token,
    json: { body: "edited" },
  });
  t.equal(edited.status, 200);
  await frame("message_update");
  // a friend request to the socket's principal
  const asked = await call(node.url, "POST", "/v1/friends/request", { token: b.token, json: { to: a.id } });
  t.equal(asked.status, 201);
  await frame("friend_request");
  // accepted: the friendship, then the friend's moment and its counts
  const accepted = await call(node.url, "POST", `/v1/friends/requests/${String(asked.body.request.id)}/accept`, {
    token: a.token,
  });
  t.equal(accepted.status, 200);
  await frame("friendship");
  const posted = await call(node.url, "POST", "/v1/moments", {
    token: b.token,
    json: { content: "for friends", visibility: "friends" },
  });
  t.equal(posted.status, 201);
  await frame("moment");
  const liked = await call(node.url, "POST", `/v1/moments/${String(posted.body.id)}/like`, { token: b.token });
  t.equal(liked.status, 204);
  await frame("moment_counts");
  for (const f of out) t.ok(clientFrame.safeParse(f).success, `client frame ${String(f["type"])} matches the document`);
  for (const f of frames)
    t.ok(
      serverFrame.safeParse(f).success,
      `server frame ${String(f["type"])} matches the document: ${JSON.stringify(f).slice(0, 200)}`,
    );
  t.ok(!serverFrame.safeParse({ type: "message", message: { id: "nope" } }).success, "and a malformed frame does not");
});

t.test(
  "/docs renders the reference in Chromium from this origin alone, under its CSP",
  { skip: NO_BROWSER },
  async (t) => {
    const node = await startTestNode(t, { engine: "memory" });
    const page0 = await call(node.url, "GET", "/docs");
    t.equal(page0.status, 200);
    t.match(page0.headers.get("content-type") ?? "", /^text\/html/);
    const csp = page0.headers.get("content-security-policy") ?? "";
    t.match(csp, /default-src 'self'/);
    t.notMatch(csp, /https?:|unsafe/, "the CSP names no other origin and nothing unsafe");
    const asset = [...page0.text.matchAll(/src="(\/docs\/assets\/[^"]+)"/g)][0]![1]!;
    const js = await fetch(node.url + asset);
    t.equal(
      js.headers.get("cache-control"),
      "public, max-age=31536000, immutable",
      "versioned assets are cached for good",
    );
    await js.arrayBuffer();

    const profile = await mkdtemp(join(tmpdir(), "flock-docs-"));
    t.teardown(() => rm(profile, { recursive: true, force: true }));
    const context = await chromium.launchPersistentContext(profile, CHROMIUM_OPTIONS);
    t.teardown(() => context.close());
    const page = await context.newPage();
    const requested: string[] = [];
    const complaints: string[] = [];
    page.on("request", (r) => requested.push(r.url()));
    page.on("console", (m) => {
      if (m.type() === "error" || /Content Security Policy/i.test(m.text())) complaints.push(m.text());
    });
    page.on("pageerror", (e) => complaints.push(String(e)));
    await page.goto(`${node.url}/docs`);
    await page.waitForSelector(".opblock", { timeout: 30_000 });
    const served = (
      await call<{ paths: Record<string, object>; webhooks?: Record<string, object> }>(
        node.url,
        "GET",
        "/v1/openapi.json",
      )
    ).body;
    // the paths' operations, and the events of the `webhooks` section (rendered as operations too)
    const operations = [...Object.values(served.paths), ...Object.values(served.webhooks ?? {})].reduce(
      (n, p) => n + Object.keys(p).length,
      0,
    );
    t.equal(await page.locator(".opblock").count(), operations, "one rendered operation per operation of the document");
    t.ok(
      requested.some((u) => u.endsWith("/v1/openapi.json")),
      "the page loaded the document",
    );
    t.same(
      requested.filter((u) => !u.startsWith(node.url + "/")),
      [],
      "every request of the page went to the node itself",
    );
    t.same(complaints, [], "no script error, no CSP violation");
  },
);
