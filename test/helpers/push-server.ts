// A local push service for tests: speaks the Web Push protocol (RFC 8030) on 127.0.0.1 as a browser's push service
// would. It makes subscriptions as a browser does (a P-256 key pair and 16 random auth bytes, an endpoint of its own),
// takes a POST to an endpoint only with a valid VAPID header (RFC 8292: `Authorization: vapid t=<JWT>,k=<key>`, the
// JWT signed ES256 by that key, its `aud` this service's origin, not expired, with a `sub`), decrypts the aes128gcm
// body (RFC 8291, written here with node:crypto: ECDH, HKDF, AES-128-GCM) with the subscription's private key and auth
// secret, keeps what it got, and answers 201 (or what the test set for that subscription: 410 for one gone).
import { createDecipheriv, createECDH, hkdfSync, randomBytes, randomUUID } from "node:crypto";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { importJWK, jwtVerify } from "jose";

export interface Received {
  /** The decrypted payload, as text. */
  text: string;
  /** The VAPID public key the push was signed with (base64url). */
  vapidKey: string;
  /** The JWT's claims. */
  claims: { aud: string; exp: number; sub: string };
  headers: { ttl: string | undefined; urgency: string | undefined; topic: string | undefined };
}

export interface TestSubscription {
  /** What a browser's PushSubscription.toJSON() gives: POST it to /v1/users/me/push-subscriptions. */
  json: { endpoint: string; keys: { p256dh: string; auth: string } };
  received: Received[];
  /** What this endpoint answers a valid push (201 unless set; 410 says the subscription is gone). */
  answer: number;
}

export interface PushServer {
  origin: string;
  subscribe(): TestSubscription;
  /** Pushes refused (a bad signature, audience, body), with why. */
  refused: string[];
  close(): Promise<void>;
}

interface Kept extends TestSubscription {
  ecdh: ReturnType<typeof createECDH>;
  auth: Buffer;
}

/** RFC 8291 section 3.4 and RFC 8188: the plaintext of an aes128gcm body encrypted to (`ecdh`, `auth`). */
export function decryptAes128gcm(body: Buffer, ecdh: ReturnType<typeof createECDH>, auth: Buffer): Buffer {
  const salt = body.subarray(0, 16);
  const rs = body.readUInt32BE(16);
  const idlen = body[20]!;
  const asPublic = body.subarray(21, 21 + idlen);
  const records = body.subarray(21 + idlen);
  if (idlen !== 65) throw new Error(`the key id is ${idlen} bytes, not an uncompressed P-256 point`);
  if (records.length > rs) throw new Error("more than one record: a push is one");
  const uaPublic = ecdh.getPublicKey();
  const secret = ecdh.computeSecret(asPublic);
  const keyInfo = Buffer.concat([Buffer.from("WebPush: info\0"), uaPublic, asPublic]);
  const ikm = Buffer.from(hkdfSync("sha256", secret, auth, keyInfo, 32));
  const cek = Buffer.from(hkdfSync("sha256", ikm, salt, Buffer.from("Content-Encoding: aes128gcm\0"), 16));
  const nonce = Buffer.from(hkdfSync("sha256", ikm, salt, Buffer.from("Content-Encoding: nonce\0"), 12));
  const decipher = createDecipheriv("aes-128-gcm", cek, nonce);
  decipher.setAuthTag(records.subarray(records.length - 16));
  const padded = Buffer.concat([decipher.update(records.subarray(0, records.length - 16)), decipher.final()]);
  // the last record ends with the delimiter 0x02, then any zero padding
  let end = padded.length - 1;
  while (end >= 0 && padded[end] === 0) end--;
  if (padded[end] !== 2) throw new Error("the last record has no 0x02 delimiter");
  return padded.subarray(0, end);
}

/** The VAPID header's JWT verified with its key: its claims, or throws why not. */
async function verifyVapid(
  header: string | undefined,
  origin: string,
): Promise<{ key: string; claims: Received["claims"] }> {
  const m = /^vapid t=([^,\s]+),\s*k=([A-Za-z0-9_-]+)$/.exec(header ?? "");
  if (!m) throw new Error(`no vapid authorization (got ${JSON.stringify(header)})`);
  const [, jwt, key] = m as unknown as [string, string, string];
  const raw = Buffer.from(key, "base64url");
  if (raw.length !== 65 || raw[0] !== 4) throw new Error("k is not an uncompressed P-256 point");
  const jwk = {
    kty: "EC",
    crv: "P-256",
    x: raw.subarray(1, 33).toString("base64url"),
    y: raw.subarray(33, 65).toString("base64url"),
  };
  const { payload, protectedHeader } = await jwtVerify(jwt, await importJWK(jwk, "ES256"), { audience: origin });
  if (protectedHeader.alg !== "ES256") throw new Error(`alg ${protectedHeader.alg}`);
  if (typeof payload.sub !== "string" || !/^(mailto:|https:)/.test(payload.sub)) throw new Error("no sub");
  if (typeof payload.exp !== "number") throw new Error("no exp");
  // RFC 8292: no more than 24 hours ahead
  if (payload.exp > Date.now() / 1000 + 86_400) throw new Error("exp more than 24 hours ahead");
  return { key, claims: { aud: String(payload.aud), exp: payload.exp, sub: payload.sub } };
}

export async function startPushServer(t: { teardown(fn: () => Promise<void> | void): void }): Promise<PushServer> {
  const subs = new Map<string, Kept>();
  const refused: string[] = [];
  let origin = "";
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      void (async () => {
        const id = /^\/push\/([0-9a-f-]+)$/.exec(req.url ?? "")?.[1];
        const sub = id ? subs.get(id) : undefined;
        if (req.method !== "POST" || !sub) return answer(res, 404, "no such subscription");
        try {
          const { key, claims } = await verifyVapid(req.headers["authorization"], origin);
          if (req.headers["content-encoding"] !== "aes128gcm") throw new Error("not aes128gcm");
          if (req.headers["ttl"] === undefined) throw new Error("no TTL header (RFC 8030 requires one)");
          const text = decryptAes128gcm(Buffer.concat(chunks), sub.ecdh, sub.auth).toString("utf8");
          if (sub.answer >= 200 && sub.answer < 300)
            sub.received.push({
              text,
              vapidKey: key,
              claims,
              headers: {
                ttl: header(req, "ttl"),
                urgency: header(req, "urgency"),
                topic: header(req, "topic"),
              },
            });
          answer(res, sub.answer, "");
        } catch (err) {
          refused.push((err as Error).message);
          answer(res, 401, (err as Error).message);
        }
      })();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const close = () =>
    new Promise<void>((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    });
  t.teardown(close);
  return {
    origin,
    refused,
    subscribe() {
      const ecdh = createECDH("prime256v1");
      ecdh.generateKeys();
      const auth = randomBytes(16);
      const id = randomUUID();
      const kept: Kept = {
        ecdh,
        auth,
        answer: 201,
        received: [],
        json: {
          endpoint: `${origin}/push/${id}`,
          keys: { p256dh: ecdh.getPublicKey().toString("base64url"), auth: auth.toString("base64url") },
        },
      };
      subs.set(id, kept);
      return kept;
    },
    close,
  };
}

function header(req: IncomingMessage, name: string): string | undefined {
  const v = req.headers[name];
  return Array.isArray(v) ? v[0] : v;
}

function answer(res: ServerResponse, status: number, text: string): void {
  res.writeHead(status, { "content-type": "text/plain" });
  res.end(text);
}
