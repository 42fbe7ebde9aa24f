import t from "tap";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { createSiweMessage } from "viem/siwe";
import { call, randomIp } from "./helpers/http.ts";
import { startTestNode } from "./helpers/node.ts";

const START = Date.parse("2026-03-01T12:00:00Z");

for (const engine of ["redis", "memory"] as const) {
  t.test(`wallet sign-in (EIP-4361) over HTTP (${engine} engines)`, async (t) => {
    let clock = START;
    const node = await startTestNode(t, { engine, now: () => clock });
    const base = node.url;
    const post = (json: unknown, ip = randomIp()) =>
      call(base, "POST", "/v1/auth/wallet-verify", { json, headers: { "x-forwarded-for": ip } });

    const challenge = async (address: string) => {
      const r = await post({ address });
      if (r.status !== 200) throw new Error(`challenge failed: ${r.status} ${r.text}`);
      return r.body as { nonce: string; message: string; expires_at: string };
    };

    t.test("both steps with a fresh viem wallet: user created with its wallet, pt_ token works", async (t) => {
      const wallet = privateKeyToAccount(generatePrivateKey());
      const ch = await challenge(wallet.address);
      t.same(Object.keys(ch).sort(), ["expires_at", "message", "nonce"]);
      t.match(ch.nonce, /^[A-Za-z0-9]{8,}$/);
      t.match(ch.message, /^localhost wants you to sign in with your Ethereum account:\n/);
      t.match(ch.message, wallet.address);
      t.match(ch.message, `Nonce: ${ch.nonce}`);
      t.match(ch.message, "Chain ID: 196");
      t.match(ch.message, `Issued At: ${new Date(START).toISOString()}`);
      t.match(ch.message, `Expiration Time: ${new Date(START + 300_000).toISOString()}`);
      t.equal(ch.expires_at, new Date(START + 300_000).toISOString());

      const signature = await wallet.signMessage({ message: ch.message });
      const r = await post({ message: ch.message, signature });
      t.equal(r.status, 200, r.text);
      t.same(Object.keys(r.body).sort(), ["expires_at", "token", "user"]);
      t.match(r.body.token, /^pt_[0-9A-Za-z]{43}$/);
      t.equal(r.body.expires_at, new Date(START + 7 * 86_400_000).toISOString());
      t.match(r.body.user.id, /^P[0-9]+$/);
      t.same(r.body.user.wallets, [{ address: wallet.address.toLowerCase(), kind: "external" }]);
      t.equal(r.body.user.display_name, `${wallet.address.slice(0, 6)}…${wallet.address.slice(-4)}`);

      const me = await call(base, "GET", "/v1/users/me", { token: r.body.token });
      t.equal(me.status, 200);
      t.same(me.body.user, r.body.user);
      const [stored] = await node.svc
        .sql`select encode(hash, 'hex') as h, expires_at from tokens where principal = ${r.body.user.id}`;
      t.not(stored!.h, r.body.token, "only the hash is stored");
      t.equal((stored!.expires_at as Date).toISOString(), r.body.expires_at);

      // Signing in again with the same wallet is the same user, with a second token.
      const ch2 = await challenge(wallet.address.toLowerCase());
      const again = await post({ message: ch2.message, signature: await wallet.signMessage({ message: ch2.message }) });
      t.equal(again.status, 200);
      t.equal(again.body.user.id, r.body.user.id);
      t.not(again.body.token, r.body.token);
      t.equal(
        (await call(base, "GET", "/v1/users/me", { token: r.body.token })).status,
        200,
        "first token still valid",
      );
    });

    t.test("replayed nonce: the same signed message works once", async (t) => {
      const wallet = privateKeyToAccount(generatePrivateKey());
      const ch = await challenge(wallet.address);
      const signature = await wallet.signMessage({ message: ch.message });
      t.equal((await post({ message: ch.message, signature })).status, 200);
      const replay = await post({ message: ch.message, signature });
      t.equal(replay.status, 401);
      t.equal(replay.body.error, "unauthorized");
      t.match(replay.body.message, /already used/);
    });

    t.test("bad signature: another key, or a signature of another message", async (t) => {
      const wallet = privateKeyToAccount(generatePrivateKey());
      const other = privateKeyToAccount(generatePrivateKey());
      const ch = await challenge(wallet.address);
      const byOther = await post({ message: ch.message, signature: await other.signMessage({ message: ch.message }) });
      t.equal(byOther.status, 401);
      t.match(byOther.body.message, /bad signature/);
      const otherText = await post({ message: ch.message, signature: await wallet.signMessage({ message: "hello" }) });
      t.equal(otherText.status, 401);
      const garbage = await post({ message: ch.message, signature: "0x1234" });
      t.equal(garbage.status, 401);
      // The failed attempts did not burn the nonce: the real signature still works.
      const good = await post({ message: ch.message, signature: await wallet.signMessage({ message: ch.message }) });
      t.equal(good.status, 200);
    });

    t.test("wrong domain, wrong chain, foreign nonce, unknown nonce", async (t) => {
      const wallet = privateKeyToAccount(generatePrivateKey());
      const ch = await challenge(wallet.address);
      const fields = {
        address: wallet.address,
        chainId: 196,
        domain: "localhost",
        nonce: ch.nonce,
        uri: "https://localhost",
        version: "1" as const,
        issuedAt: new Date(clock),
      };
      const signed = async (message: string, by = wallet) => ({
        message,
        signature: await by.signMessage({ message }),
      });

      const domain = await post(
        await signed(createSiweMessage({ ...fields, domain: "evil.example", uri: "https://evil.example" })),
      );
      t.equal(domain.status, 401);
      t.match(domain.body.message, /another domain/);
      const chain = await post(await signed(createSiweMessage({ ...fields, chainId: 1 })));
      t.equal(chain.status, 401);
      t.match(chain.body.message, /another chain/);

      const intruder = privateKeyToAccount(generatePrivateKey());
      const foreign = await post(await signed(createSiweMessage({ ...fields, address: intruder.address }), intruder));
      t.equal(foreign.status, 401);
      t.match(foreign.body.message, /another address/);

      const unknown = await post(await signed(createSiweMessage({ ...fields, nonce: "abcdefgh12345678" })));
      t.equal(unknown.status, 401);
      t.match(unknown.body.message, /unknown/);

      const notSiwe = await post(await signed("just some text"));
      t.equal(notSiwe.status, 401);

      // A message the client composed itself around our nonce is fine when everything matches.
      const own = await post(await signed(createSiweMessage({ ...fields, statement: "my own words" })));
      t.equal(own.status, 200, own.text);
    });

    t.test("expired nonce: refused after 5 minutes (clock driven)", async (t) => {
      const wallet = privateKeyToAccount(generatePrivateKey());
      const ch = await challenge(wallet.address);
      const signature = await wallet.signMessage({ message: ch.message });
      // A message without its own expiry shows the nonce's own 5-minute lifetime.
      const bare = createSiweMessage({
        address: wallet.address,
        chainId: 196,
        domain: "localhost",
        nonce: ch.nonce,
        uri: "https://localhost",
        version: "1",
        issuedAt: new Date(clock),
      });
      const bareSig = await wallet.signMessage({ message: bare });
      clock += 300_000;
      const late = await post({ message: ch.message, signature });
      t.equal(late.status, 401);
      t.match(late.body.message, /expired/);
      const lateBare = await post({ message: bare, signature: bareSig });
      t.equal(lateBare.status, 401);
      t.match(lateBare.body.message, /nonce expired/);

      // Just inside the window it works.
      const ch2 = await challenge(wallet.address);
      clock += 299_000;
      const inTime = await post({
        message: ch2.message,
        signature: await wallet.signMessage({ message: ch2.message }),
      });
      t.equal(inTime.status, 200);
    });

    t.test("human tokens expire after HUMAN_TOKEN_TTL (clock driven)", async (t) => {
      const wallet = privateKeyToAccount(generatePrivateKey());
      const ch = await challenge(wallet.address);
      const r = await post({ message: ch.message, signature: await wallet.signMessage({ message: ch.message }) });
      t.equal(r.status, 200);
      t.equal((await call(base, "GET", "/v1/users/me", { token: r.body.token })).status, 200);
      clock += 7 * 86_400_000 - 1000;
      t.equal((await call(base, "GET", "/v1/users/me", { token: r.body.token })).status, 200, "valid a second before");
      clock += 1000;
      const expired = await call(base, "GET", "/v1/users/me", { token: r.body.token });
      t.equal(expired.status, 401);
      t.match(expired.body.message, /expired/);
    });

    t.test("malformed requests answer 400 naming the field", async (t) => {
      const none = await post({});
      t.equal(none.status, 400);
      t.equal(none.body.field, "message");
      const both = await post({ address: "0x" + "a".repeat(40), message: "m", signature: "0x00" });
      t.equal(both.status, 400);
      t.equal(both.body.field, "address");
      const badAddr = await post({ address: "0x1234" });
      t.equal(badAddr.status, 400);
      t.equal(badAddr.body.field, "address");
      const badChecksum = await post({ address: "0xAbCdEf0123456789aBcDeF0123456789AbCdEf01" });
      t.equal(badChecksum.status, 400, "a mixed-case address must carry a valid checksum");
      const noSig = await post({ message: "m" });
      t.equal(noSig.status, 400);
      t.equal(noSig.body.field, "signature");
      const extra = await post({ address: "0x" + "a".repeat(40), foo: 1 });
      t.equal(extra.status, 400);
    });

    t.test("10 per minute per IP, both steps counted", async (t) => {
      const ip = randomIp();
      const wallet = privateKeyToAccount(generatePrivateKey());
      for (let i = 0; i < 10; i++) t.equal((await post({ address: wallet.address }, ip)).status, 200);
      const r = await post({ address: wallet.address }, ip);
      t.equal(r.status, 429);
      t.equal(r.body.error, "rate_limited");
      t.ok(Number(r.headers.get("retry-after")) >= 1);
      t.equal((await post({ address: wallet.address }, randomIp())).status, 200, "another IP is not limited");
    });
  });
}
