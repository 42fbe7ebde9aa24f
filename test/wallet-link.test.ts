// Adding a wallet to a person (POST /v1/users/me/wallets): one who signed up with a passkey adds a wallet and then
// signs in with either; a wallet that is someone else's way in is refused and stays theirs; only a signed challenge
// adds one; agents have no wallets to add.
import t from "tap";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { Flock, FlockError } from "../client/index.ts";
import { call, randomIp, registerAgent } from "./helpers/http.ts";
import { signInWithWallet } from "./helpers/humans.ts";
import { startTestNode } from "./helpers/node.ts";
import { SoftAuthenticator } from "./helpers/soft-authenticator.ts";

const node = await startTestNode(t, { engine: "memory" });
const post = (path: string, json: object, token?: string) =>
  call(node.url, "POST", path, { json, token, headers: { "x-forwarded-for": randomIp() } });

/** A person signed up with a passkey (an authenticator in Node), as a signed-in SDK client. */
async function passkeyPerson(name: string) {
  const key = new SoftAuthenticator(node.url.replace("127.0.0.1", "localhost"));
  const o = await post("/v1/auth/passkey/register-options", { display_name: name });
  const up = await post("/v1/auth/passkey/register", {
    challenge_id: o.body.challenge_id,
    response: key.register(o.body.options),
  });
  if (up.status !== 200) throw new Error(`passkey sign-up: ${up.status} ${up.text}`);
  return { id: up.body.user.id as string, token: up.body.token as string, key };
}

t.test("a person who signed up with a passkey adds a wallet, then signs in with it as the same person", async (t) => {
  const p = await passkeyPerson("Kai");
  const wallet = privateKeyToAccount(generatePrivateKey());
  const flock = new Flock({ baseUrl: node.url, token: p.token });
  t.same((await flock.user()).wallets, [], "no wallet yet");

  const user = await flock.addWallet(wallet.address, (message) => wallet.signMessage({ message }));
  t.same(user.wallets, [{ address: wallet.address.toLowerCase(), kind: "external" }], "the wallet is the person's");
  const again = await flock.addWallet(wallet.address, (message) => wallet.signMessage({ message }));
  t.equal(again.wallets.length, 1, "adding it again changes nothing");

  const viaWallet = await signInWithWallet(node.url, wallet);
  t.equal(viaWallet.id, p.id, "the wallet signs in as the person who added it");
  const o = await post("/v1/auth/passkey/login-options", {});
  const viaKey = await post("/v1/auth/passkey/login", {
    challenge_id: o.body.challenge_id,
    response: p.key.assert(o.body.options),
  });
  t.equal(viaKey.body.user.id, p.id, "and the passkey still does");
});

t.test("someone else's wallet is refused and stays theirs; only a valid signature adds one", async (t) => {
  const owner = await signInWithWallet(node.url);
  const p = await passkeyPerson("Lee");
  const flock = new Flock({ baseUrl: node.url, token: p.token });
  const taken = await flock
    .addWallet(owner.wallet.address, (message) => owner.wallet.signMessage({ message }))
    .catch((e: unknown) => e);
  t.ok(taken instanceof FlockError);
  t.equal((taken as FlockError).status, 409, "a wallet that is another person's way in");
  t.equal((await signInWithWallet(node.url, owner.wallet)).id, owner.id, "it still signs in as its owner");

  const mine = privateKeyToAccount(generatePrivateKey());
  const other = privateKeyToAccount(generatePrivateKey());
  const ch = await post("/v1/users/me/wallets", { address: mine.address }, p.token);
  t.equal(ch.status, 200);
  t.match(ch.body.message, mine.address, "a message naming the wallet");
  const forged = await post(
    "/v1/users/me/wallets",
    { message: ch.body.message, signature: await other.signMessage({ message: ch.body.message }) },
    p.token,
  );
  t.equal(forged.status, 401, "signed by another key");
  const bad = await post("/v1/users/me/wallets", { address: "0x123" }, p.token);
  t.equal(bad.status, 400, "not an address");
  t.same((await call(node.url, "GET", "/v1/users/me", { token: p.token })).body.user.wallets, [], "nothing was added");

  const agent = await registerAgent(node.url, "Bot");
  t.equal(
    (await post("/v1/users/me/wallets", { address: mine.address }, agent.token)).status,
    403,
    "an agent has no wallets to add",
  );
  t.equal((await post("/v1/users/me/wallets", { address: mine.address })).status, 401, "signed in only");
});
