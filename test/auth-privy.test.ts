import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { exportJWK, exportSPKI, generateKeyPair, SignJWT } from "jose";
import t from "tap";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { call, randomIp } from "./helpers/http.ts";
import { startTestNode } from "./helpers/node.ts";

const START = Date.parse("2026-03-01T12:00:00Z");
const APP_ID = "flock-test-app";
const KID = "test-key-1";

/** A JWKS endpoint on 127.0.0.1 serving the given public keys. */
async function jwksServer(keys: object[]): Promise<{ url: string; hits: () => number; server: Server }> {
  let hits = 0;
  const server = createServer((req, res) => {
    hits++;
    res.writeHead(200, { "content-type": "application/json" });
    res.end(JSON.stringify({ keys }));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return { url: `http://127.0.0.1:${port}/.well-known/jwks.json`, hits: () => hits, server };
}

t.test("identity-provider login with locally minted ES256 tokens", async (t) => {
  let clock = START;
  const good = await generateKeyPair("ES256", { extractable: true });
  const rogue = await generateKeyPair("ES256", { extractable: true });
  const jwk = { ...(await exportJWK(good.publicKey)), kid: KID, alg: "ES256", use: "sig" };
  const jwks = await jwksServer([jwk]);
  t.teardown(() => new Promise<void>((resolve) => jwks.server.close(() => resolve())));
  const node = await startTestNode(t, {
    now: () => clock,
    env: { PRIVY_APP_ID: APP_ID, PRIVY_JWKS_URL: jwks.url },
  });
  const base = node.url;

  interface Mint {
    sub?: string;
    aud?: string;
    iss?: string;
    exp?: number;
    key?: CryptoKey;
    kid?: string;
    claims?: Record<string, unknown>;
  }
  const mint = (m: Mint = {}) => {
    const now = Math.floor(clock / 1000);
    return new SignJWT({ sid: "session-1", ...m.claims })
      .setProtectedHeader({ alg: "ES256", kid: m.kid ?? KID, typ: "JWT" })
      .setIssuer(m.iss ?? "privy.io")
      .setAudience(m.aud ?? APP_ID)
      .setSubject(m.sub ?? "did:privy:alice")
      .setIssuedAt(now)
      .setExpirationTime(m.exp ?? now + 3600)
      .sign(m.key ?? good.privateKey);
  };
  const login = async (token: string, ip = randomIp()) =>
    call(base, "POST", "/v1/auth/privy-login", { json: { token }, headers: { "x-forwarded-for": ip } });

  t.test("a valid token signs in; the subject maps to one user", async (t) => {
    const r = await login(await mint({ sub: "did:privy:valid" }));
    t.equal(r.status, 200, r.text);
    t.same(Object.keys(r.body).sort(), ["expires_at", "token", "user"]);
    t.match(r.body.token, /^pt_[0-9A-Za-z]{43}$/);
    t.match(r.body.user.id, /^P[0-9]+$/);
    t.same(r.body.user.wallets, []);
    t.equal(r.body.expires_at, new Date(START + 7 * 86_400_000).toISOString());
    const me = await call(base, "GET", "/v1/users/me", { token: r.body.token });
    t.equal(me.status, 200);
    t.equal(me.body.user.id, r.body.user.id);
    const again = await login(await mint({ sub: "did:privy:valid" }));
    t.equal(again.status, 200);
    t.equal(again.body.user.id, r.body.user.id, "same subject, same user");
    const other = await login(await mint({ sub: "did:privy:someone-else" }));
    t.not(other.body.user.id, r.body.user.id);
    t.ok(jwks.hits() >= 1 && jwks.hits() <= 2, "keys fetched over HTTP and cached");
  });

  t.test("expired, wrong audience, wrong issuer, wrong key, unknown key, garbage: 401", async (t) => {
    const now = Math.floor(clock / 1000);
    const cases: [string, Promise<string> | string, RegExp][] = [
      ["expired", mint({ exp: now - 60 }), /expired/],
      ["wrong audience", mint({ aud: "another-app" }), /another app/],
      ["wrong issuer", mint({ iss: "evil.example" }), /another issuer/],
      ["wrong key", mint({ key: rogue.privateKey }), /bad token signature/],
      ["unknown key id", mint({ key: rogue.privateKey, kid: "rogue" }), /bad token signature/],
      ["garbage", "not.a.jwt", /malformed/],
    ];
    for (const [name, token, message] of cases) {
      const r = await login(await token);
      t.equal(r.status, 401, name);
      t.equal(r.body.error, "unauthorized", name);
      t.match(r.body.message, message, name);
    }
    const count = await node.svc.sql`select count(*)::int as n from identities where subject = 'did:privy:alice'`;
    t.equal(count[0]!.n, 0, "no user created by a refused token");
  });

  t.test("the token's expiry follows the clock", async (t) => {
    const token = await mint({ sub: "did:privy:clock" });
    t.equal((await login(token)).status, 200);
    clock += 3600_000 + 10_000; // past exp plus the 5 s tolerance
    t.teardown(() => {
      clock = START;
    });
    const late = await login(token);
    t.equal(late.status, 401);
    t.match(late.body.message, /expired/);
  });

  t.test("embedded wallets the token vouches for are recorded; a known wallet joins its user", async (t) => {
    const embedded = privateKeyToAccount(generatePrivateKey());
    const linked = JSON.stringify([
      { type: "email", address: "a@example.com" },
      { type: "wallet", address: embedded.address, wallet_client_type: "privy", chain_type: "ethereum" },
      { type: "wallet", address: "0x" + "1".repeat(40), wallet_client_type: "metamask" },
    ]);
    const r = await login(await mint({ sub: "did:privy:embedded", claims: { linked_accounts: linked } }));
    t.equal(r.status, 200, r.text);
    t.same(r.body.user.wallets, [{ address: embedded.address.toLowerCase(), kind: "embedded" }]);

    // A wallet user who later logs in through the provider with the same (embedded) wallet keeps one account.
    const w = privateKeyToAccount(generatePrivateKey());
    const ch = await call(base, "POST", "/v1/auth/wallet-verify", {
      json: { address: w.address },
      headers: { "x-forwarded-for": randomIp() },
    });
    const signed = await call(base, "POST", "/v1/auth/wallet-verify", {
      json: { message: ch.body.message, signature: await w.signMessage({ message: ch.body.message }) },
      headers: { "x-forwarded-for": randomIp() },
    });
    t.equal(signed.status, 200);
    const viaProvider = await login(
      await mint({
        sub: "did:privy:joins",
        claims: { linked_accounts: [{ type: "wallet", address: w.address, connector_type: "embedded" }] },
      }),
    );
    t.equal(viaProvider.status, 200);
    t.equal(viaProvider.body.user.id, signed.body.user.id);
  });

  t.test("400 for a missing token; 10 per minute per IP", async (t) => {
    const missing = await call(base, "POST", "/v1/auth/privy-login", {
      json: {},
      headers: { "x-forwarded-for": randomIp() },
    });
    t.equal(missing.status, 400);
    t.equal(missing.body.field, "token");
    const ip = randomIp();
    for (let i = 0; i < 10; i++) t.equal((await login("x.y.z", ip)).status, 401);
    const limited = await login(await mint(), ip);
    t.equal(limited.status, 429);
    t.equal(limited.body.error, "rate_limited");
  });
});

t.test("a configured PEM verification key instead of a JWKS URL", async (t) => {
  const clock = START;
  const good = await generateKeyPair("ES256", { extractable: true });
  const rogue = await generateKeyPair("ES256", { extractable: true });
  const node = await startTestNode(t, {
    engine: "memory",
    now: () => clock,
    env: { PRIVY_APP_ID: APP_ID, PRIVY_VERIFICATION_KEY: await exportSPKI(good.publicKey) },
  });
  const mint = (key: CryptoKey) =>
    new SignJWT({})
      .setProtectedHeader({ alg: "ES256" })
      .setIssuer("privy.io")
      .setAudience(APP_ID)
      .setSubject("did:privy:pem")
      .setIssuedAt(Math.floor(clock / 1000))
      .setExpirationTime(Math.floor(clock / 1000) + 600)
      .sign(key);
  const login = async (token: string) =>
    call(node.url, "POST", "/v1/auth/privy-login", { json: { token }, headers: { "x-forwarded-for": randomIp() } });
  t.equal((await login(await mint(good.privateKey))).status, 200);
  const wrong = await login(await mint(rogue.privateKey));
  t.equal(wrong.status, 401);
  t.match(wrong.body.message, /bad token signature/);
});

t.test("not configured: 404; keys unreachable: 503", async (t) => {
  const off = await startTestNode(t, { engine: "memory" });
  const r = await call(off.url, "POST", "/v1/auth/privy-login", {
    json: { token: "a.b.c" },
    headers: { "x-forwarded-for": randomIp() },
  });
  t.equal(r.status, 404);
  t.equal(r.body.error, "not_found");

  const closed = await jwksServer([]);
  const deadUrl = closed.url;
  await new Promise<void>((resolve) => closed.server.close(() => resolve()));
  const down = await startTestNode(t, { engine: "memory", env: { PRIVY_APP_ID: APP_ID, PRIVY_JWKS_URL: deadUrl } });
  const key = await generateKeyPair("ES256");
  const token = await new SignJWT({})
    .setProtectedHeader({ alg: "ES256", kid: KID })
    .setIssuer("privy.io")
    .setAudience(APP_ID)
    .setSubject("did:privy:x")
    .setIssuedAt()
    .setExpirationTime("1h")
    .sign(key.privateKey);
  const u = await call(down.url, "POST", "/v1/auth/privy-login", {
    json: { token },
    headers: { "x-forwarded-for": randomIp() },
  });
  t.equal(u.status, 503);
  t.equal(u.body.error, "unavailable");
});
