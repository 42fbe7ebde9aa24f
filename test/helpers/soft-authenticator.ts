// A WebAuthn authenticator in Node, for tests that reach the passkey routes without a browser: it makes an ES256
// credential, answers a registration with a "none" attestation and a sign-in with a signed assertion, in WebAuthn's
// JSON form, as a browser's credential.toJSON() gives them. The browser tests use Chromium's virtual authenticator;
// this one speaks the same protocol to the same server code.
import { createHash, createPublicKey, generateKeyPairSync, type KeyObject, randomBytes, sign } from "node:crypto";

const sha256 = (b: Buffer | string) => createHash("sha256").update(b).digest();
const b64u = (b: Buffer) => b.toString("base64url");

/** The few CBOR items an attestation needs: maps, byte and text strings, and small integers. */
function cbor(v: unknown): Buffer {
  const head = (major: number, n: number): Buffer => {
    if (n < 24) return Buffer.from([(major << 5) | n]);
    if (n < 256) return Buffer.from([(major << 5) | 24, n]);
    if (n < 65536) return Buffer.from([(major << 5) | 25, n >> 8, n & 255]);
    const b = Buffer.alloc(5);
    b[0] = (major << 5) | 26;
    b.writeUInt32BE(n, 1);
    return b;
  };
  if (typeof v === "number") return v >= 0 ? head(0, v) : head(1, -1 - v);
  if (Buffer.isBuffer(v)) return Buffer.concat([head(2, v.length), v]);
  if (typeof v === "string") {
    const s = Buffer.from(v, "utf8");
    return Buffer.concat([head(3, s.length), s]);
  }
  if (v instanceof Map) {
    const parts: Buffer[] = [head(5, v.size)];
    for (const [k, x] of v) parts.push(cbor(k), cbor(x));
    return Buffer.concat(parts);
  }
  throw new Error(`cbor: ${typeof v} not supported`);
}

export interface SoftCredential {
  id: Buffer;
  privateKey: KeyObject;
  counter: number;
}

export class SoftAuthenticator {
  readonly credentials: SoftCredential[] = [];

  constructor(
    /** The page origin the client data names, e.g. http://localhost:8080. */
    private readonly origin: string,
    /** What the authenticator's counter does on each use (0: never counts, as some platform authenticators). */
    private readonly counts = true,
  ) {}

  private clientData(type: "webauthn.create" | "webauthn.get", challenge: string): Buffer {
    return Buffer.from(JSON.stringify({ type, challenge, origin: this.origin, crossOrigin: false }));
  }

  /**
   * The answer to registration options (`options` as the server gave them): a new credential, or `again` registered
   * once more (the same passkey used to sign up after its account was deleted).
   */
  register(options: { challenge: string; rp: { id: string } }, again?: SoftCredential) {
    const { privateKey, publicKey } = again
      ? { privateKey: again.privateKey, publicKey: createPublicKey(again.privateKey) }
      : generateKeyPairSync("ec", { namedCurve: "P-256" });
    const jwk = publicKey.export({ format: "jwk" }) as { x: string; y: string };
    const cose = new Map<number, unknown>([
      [1, 2], // kty: EC2
      [3, -7], // alg: ES256
      [-1, 1], // crv: P-256
      [-2, Buffer.from(jwk.x, "base64url")],
      [-3, Buffer.from(jwk.y, "base64url")],
    ]);
    const id = again?.id ?? randomBytes(16);
    const cred: SoftCredential = again ?? { id, privateKey, counter: 0 };
    if (!again) this.credentials.push(cred);
    const idLen = Buffer.alloc(2);
    idLen.writeUInt16BE(id.length);
    // flags: user present, user verified, attested credential data
    const authData = Buffer.concat([
      sha256(options.rp.id),
      Buffer.from([0x45]),
      Buffer.alloc(4),
      Buffer.alloc(16),
      idLen,
      id,
      cbor(cose),
    ]);
    const attestationObject = cbor(
      new Map<string, unknown>([
        ["fmt", "none"],
        ["attStmt", new Map()],
        ["authData", authData],
      ]),
    );
    return {
      id: b64u(id),
      rawId: b64u(id),
      type: "public-key" as const,
      response: {
        clientDataJSON: b64u(this.clientData("webauthn.create", options.challenge)),
        attestationObject: b64u(attestationObject),
        transports: ["internal"],
      },
      clientExtensionResults: {},
      authenticatorAttachment: "platform",
    };
  }

  /** The answer to sign-in options with credential `cred` (the newest by default), signed over its counter. */
  assert(options: { challenge: string; rpId: string }, cred = this.credentials.at(-1)!) {
    if (this.counts) cred.counter += 1;
    const counter = Buffer.alloc(4);
    counter.writeUInt32BE(cred.counter);
    const authData = Buffer.concat([sha256(options.rpId), Buffer.from([0x05]), counter]);
    const clientDataJSON = this.clientData("webauthn.get", options.challenge);
    const signature = sign("sha256", Buffer.concat([authData, sha256(clientDataJSON)]), cred.privateKey);
    return {
      id: b64u(cred.id),
      rawId: b64u(cred.id),
      type: "public-key" as const,
      response: {
        clientDataJSON: b64u(clientDataJSON),
        authenticatorData: b64u(authData),
        signature: b64u(signature),
      },
      clientExtensionResults: {},
      authenticatorAttachment: "platform",
    };
  }
}
